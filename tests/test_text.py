"""The one conversion text goes through where it enters (checkweigh._text)."""

from __future__ import annotations

import json

import orjson
from hypothesis import given
from hypothesis import strategies as st

from checkweigh._text import NOT_JSON, json_with_surrogates, safe_data, safe_text
from checkweigh.core import Step, VerdictState, failed

ANY_TEXT = st.text(
    st.one_of(
        st.characters(exclude_categories=()),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    )
)


def test_lone_surrogates_become_visible_escapes_and_pairs_their_character() -> None:
    assert safe_text("a\ud800b") == "a\\ud800b"
    assert safe_text("\udc80") == "\\udc80"
    assert safe_text("\ud83d\ude00 and \udbff") == "\U0001f600 and \\udbff"
    assert safe_text("\ude00\ud83d") == "\\ude00\\ud83d"  # low then high: no pair


def test_text_without_surrogates_is_the_same_object() -> None:
    for text in ("plain", "caf\u00e9 \U0001f600 \x1b[2J", ""):
        assert safe_text(text) is text


@given(ANY_TEXT)
def test_any_text_becomes_utf8_and_only_surrogates_change(text: str) -> None:
    made = safe_text(text)
    made.encode("utf-8")  # never raises
    orjson.dumps(made)
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert made is text


def test_data_is_made_safe_through_dicts_lists_tuples_and_models_keys_too() -> None:
    step = Step(kind="assistant", content="hi \ud800")
    value = {"k\udc00": [("x", "\ud801"), step], "n": 1, "same": ["ok"]}
    made = safe_data(value)
    assert made == {
        "k\\udc00": [("x", "\\ud801"), step.model_copy(update={"content": "hi \\ud800"})],
        "n": 1,
        "same": ["ok"],
    }
    assert made["same"] is value["same"]
    assert step.content == "hi \ud800"  # the original is not changed
    clean = {"a": [1, "b", {"c": None}]}
    assert safe_data(clean) is clean


def test_json_the_fast_parsers_refuse_for_a_lone_surrogate_is_read_again() -> None:
    raw = json.dumps({"reply": "x\ud800", "pair": "\U0001f600"}).encode()
    assert json_with_surrogates(raw) == {"reply": "x\\ud800", "pair": "\U0001f600"}
    assert json_with_surrogates(raw.decode()) == {"reply": "x\\ud800", "pair": "\U0001f600"}


def test_json_bad_for_another_reason_or_without_such_an_escape_is_not_read() -> None:
    assert json_with_surrogates(b'{"a": "\\ud800",}') is NOT_JSON
    assert json_with_surrogates(b'{"a": NaN, "b": "\\ud800"}') is NOT_JSON
    assert json_with_surrogates(b'{"a": 1,}') is NOT_JSON
    assert json_with_surrogates(b"[" * 100_000 + b'"\\ud800"' + b"]" * 100_000) is NOT_JSON


def test_enums_and_named_tuples_keep_their_type() -> None:
    verdict = failed("booked 11:00")
    value = {"answered": (verdict, ()), "state": VerdictState.PASSED, "list": ["\ud800"]}
    made = safe_data(value)
    assert made["answered"] is value["answered"]
    assert made["state"] is VerdictState.PASSED
    assert made["list"] == ["\\ud800"]
