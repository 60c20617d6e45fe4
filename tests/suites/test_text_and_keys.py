"""UTF-8 with the line of a bad byte, inert quoting of file text, and error locations that
keep the user's own keys (with '-' or '[') while dropping pydantic's tags."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from checkweigh.errors import CaseFileError, SuiteError
from checkweigh.suites import iter_cases, load_suite
from checkweigh.suites._errors import clean_loc, loc_text
from checkweigh.suites._schema import SuiteSpec
from checkweigh.suites._text import TextFileError, decode_utf8, inert, key_text

FUZZ = settings(max_examples=150, deadline=None, database=None)


def test_a_bom_is_dropped() -> None:
    assert decode_utf8(b"\xef\xbb\xbfname: x\n") == "name: x\n"


@pytest.mark.parametrize(
    ("data", "line", "message"),
    [
        (b"a\nb\ncaf\xe9\n", 3, "byte 0xe9 at column 4 (invalid continuation byte)"),
        (b"\xef\xbb\xbf\x80", 1, "byte 0x80 at column 4 (invalid start byte)"),
        (b"ok\r\n\xff\r\n", 2, "byte 0xff at column 1 (invalid start byte)"),
        ("héllo".encode("utf-16"), 1, "the file is UTF-16 text; expected UTF-8"),
    ],
)
def test_a_bad_byte_names_its_line_and_column(data: bytes, line: int, message: str) -> None:
    with pytest.raises(TextFileError) as info:
        decode_utf8(data)
    assert info.value.line == line
    assert message in str(info.value)


def test_a_line_of_a_larger_file_is_placed_in_it() -> None:
    with pytest.raises(TextFileError) as info:
        decode_utf8(b'{"id": "caf\xe9"}\n', first_line=41)
    assert (info.value.line, str(info.value)) == (
        41,
        "not UTF-8 text: byte 0xe9 at column 12 (invalid continuation byte); expected UTF-8",
    )


def test_inert_text_escapes_what_a_terminal_would_act_on() -> None:
    hostile = "ok\x1b]8;;https://evil.test\x07link\x1b]8;;\x07 \u202egnp.exe\x00"
    shown = inert(hostile)
    assert shown.isprintable()
    assert shown == "ok\\x1b]8;;https://evil.test\\x07link\\x1b]8;;\\x07 \\u202egnp.exe\\x00"
    assert inert("café [bold]x[/]") == "café [bold]x[/]"  # printable text is left alone


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("pass_threshold", "pass_threshold"),
        ("check-list", "check-list"),
        ("my check", "'my check'"),
        ("a\x1bb", "'a\\x1bb'"),
        (7, "7"),
        (None, "None"),
    ],
)
def test_key_text(key: object, text: str) -> None:
    assert key_text(key) == text


def test_loc_text_quotes_keys_that_are_not_plain_names() -> None:
    assert loc_text(("rubrics", "a b", "weights", 0)) == "rubrics['a b'].weights[0]"
    assert loc_text(("thresholds", "pass-threshold")) == "thresholds.pass-threshold"


def _errors(data: dict[str, object]) -> list[tuple[tuple[str | int, ...], str]]:
    with pytest.raises(ValidationError) as info:
        SuiteSpec.model_validate(data)
    return [(clean_loc(tuple(e["loc"]), data), e["type"]) for e in info.value.errors()]


BASE: dict[str, object] = {
    "name": "x",
    "cases": "c.jsonl",
    "checks": {"a": {"type": "equals"}},
    "rubrics": {"r": {"weights": {"a": 1}}},
}


def test_clean_loc_keeps_user_keys_with_dashes_and_brackets() -> None:
    data = {**BASE, "thresholds": {"pass-threshold": 80}, "checks[0]": 1}
    assert sorted(_errors(data)) == [
        (("checks[0]",), "extra_forbidden"),
        (("thresholds", "pass-threshold"), "extra_forbidden"),
    ]


def test_clean_loc_drops_union_and_validator_tags() -> None:
    data = {**BASE, "rubrics": {"r": {"weights": {"a": 1}, "when": {"path": "a", "bad-op": 1}}}}
    locs = _errors(data)
    assert (("rubrics", "r", "when", "bad-op"), "extra_forbidden") in locs
    assert (("rubrics", "r", "when"), "list_type") in locs


def test_clean_loc_keeps_a_missing_field() -> None:
    data = {k: v for k, v in BASE.items() if k != "cases"}
    assert _errors(data) == [(("cases",), "missing")]


@FUZZ
@given(st.binary(max_size=400))
def test_any_bytes_as_a_suite_are_loaded_or_one_suite_error(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "suite.yaml"
        path.write_bytes(data)
        try:
            load_suite(path)
        except SuiteError as exc:
            message = str(exc)
        else:
            return
    assert message.isprintable()  # one line: no newline, no control character


yamlish = st.text(
    alphabet=st.sampled_from(list("abc:-[]{}&*!<>?|#'\",\n\t 019.~\x1b\u202e")), max_size=200
)


@FUZZ
@given(yamlish, st.sampled_from(["cases.yaml", "cases.json", "cases.jsonl"]))
def test_any_yamlish_text_as_cases_is_cases_or_one_case_file_error(text: str, name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_text(text, encoding="utf-8")
        try:
            list(iter_cases(path))
        except CaseFileError as exc:
            message = str(exc)
        else:
            return
    assert message.isprintable()  # one line: no newline, no control character
