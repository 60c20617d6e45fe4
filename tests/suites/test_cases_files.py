"""Cases files: JSONL streamed line by line, YAML and JSON lists, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from checkweigh.core import Case
from checkweigh.errors import CaseFileError
from checkweigh.suites import count_cases, iter_cases


def _jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
        encoding="utf-8",
    )
    return path


def _error(path: Path) -> CaseFileError:
    with pytest.raises(CaseFileError) as info:
        list(iter_cases(path))
    assert "\n" not in str(info.value)
    return info.value


def test_jsonl_cases_load_in_order(tmp_path: Path, recorded_cases: list[dict[str, Any]]) -> None:
    path = _jsonl(tmp_path / "cases.jsonl", recorded_cases)
    # blank lines are allowed
    path.write_text(path.read_text(encoding="utf-8").replace("\n", "\n\n", 1), encoding="utf-8")
    cases = list(iter_cases(path))
    assert cases == [Case.model_validate(c) for c in recorded_cases]
    assert [c.id for c in cases] == ["conflict-1", "happy-1", "wrong-time"]
    first = cases[0]
    assert first.trace[2].name == "conflict_detected"
    assert first.trace[-2].arguments == {
        "participants": ["Alice", "Bob"],
        "time": "14:00",
        "duration": 30,
    }
    assert first.output == "Booked Alice and Bob on Tuesday at 14:00."
    assert count_cases(path) == 3
    assert list(iter_cases(str(path))) == cases


def test_yaml_and_json_lists_load(tmp_path: Path, recorded_cases: list[dict[str, Any]]) -> None:
    expected = [Case.model_validate(c) for c in recorded_cases]
    wrapped = tmp_path / "cases.yaml"
    wrapped.write_text(yaml.safe_dump({"cases": recorded_cases}), encoding="utf-8")
    plain = tmp_path / "cases.yml"
    plain.write_text(yaml.safe_dump(recorded_cases), encoding="utf-8")
    as_json = tmp_path / "cases.json"
    as_json.write_text(json.dumps(recorded_cases, indent=2), encoding="utf-8")
    for path in (wrapped, plain, as_json):
        assert list(iter_cases(path)) == expected
        assert count_cases(path) == 3


def test_bad_json_names_the_line(tmp_path: Path, recorded_cases: list[dict[str, Any]]) -> None:
    truncated = json.dumps(recorded_cases[1])[:-40]
    path = _jsonl(tmp_path / "cases.jsonl", [recorded_cases[0], "", truncated, recorded_cases[2]])
    error = _error(path)
    assert str(error).startswith(f"{path}:3: invalid JSON: ")
    assert (error.line, error.field) == (3, None)


def test_the_good_cases_before_a_bad_line_are_yielded(
    tmp_path: Path, recorded_cases: list[dict[str, Any]]
) -> None:
    path = _jsonl(tmp_path / "cases.jsonl", [recorded_cases[0], "{not json", recorded_cases[1]])
    stream = iter_cases(path)
    assert next(stream).id == "conflict-1"
    with pytest.raises(CaseFileError, match=r"cases\.jsonl:2: invalid JSON"):
        next(stream)


@pytest.mark.parametrize(
    ("edit", "field", "message"),
    [
        (
            lambda c: c["trace"][1].update(kind="tool"),
            "trace[1].kind",
            "expected 'user', 'assistant', 'tool_call', 'system' or 'event', got 'tool'",
        ),
        (lambda c: c.update(id=17), "id", "expected text, got 17"),
        (lambda c: c.update(final_state=["booked"]), "final_state", "expected a mapping"),
        (lambda c: c.pop("id"), "id", "required field is missing"),
        (lambda c: c.update(outcome="ok"), "outcome", "unknown key 'outcome'"),
        (lambda c: c["trace"][0].update(tool="x"), "trace[0].tool", "unknown key 'tool'"),
        (lambda c: c.update(latency_ms="fast"), "latency_ms", "number"),
    ],
    ids=[
        "step-kind",
        "id-type",
        "final-state-type",
        "missing-id",
        "unknown-key",
        "step-key",
        "latency",
    ],
)
def test_wrong_field_names_the_line_and_field(
    tmp_path: Path,
    recorded_cases: list[dict[str, Any]],
    edit: Any,
    field: str,
    message: str,
) -> None:
    edit(recorded_cases[2])
    path = _jsonl(tmp_path / "cases.jsonl", recorded_cases)
    error = _error(path)
    assert str(error).startswith(f"{path}:3: {field}: ")
    assert message in str(error)
    assert (error.line, error.field) == (3, field)


def test_wrong_field_in_yaml_names_its_line(
    tmp_path: Path, recorded_cases: list[dict[str, Any]]
) -> None:
    recorded_cases[1]["trace"][1]["kind"] = "tool"
    path = tmp_path / "cases.yaml"
    text = yaml.safe_dump({"cases": recorded_cases}, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    error = _error(path)
    lines = text.splitlines()
    line = next(i for i, t in enumerate(lines, 1) if t.strip().endswith("kind: tool"))
    assert str(error) == (
        f"{path}:{line}: [1].trace[1].kind: expected 'user', 'assistant', 'tool_call', "
        "'system' or 'event', got 'tool'"
    )


def test_duplicate_ids(tmp_path: Path, recorded_cases: list[dict[str, Any]]) -> None:
    recorded_cases[2]["id"] = "conflict-1"
    path = _jsonl(tmp_path / "cases.jsonl", recorded_cases)
    assert str(_error(path)) == f"{path}:3: id: duplicate case id 'conflict-1'"
    listed = tmp_path / "cases.yaml"
    listed.write_text(yaml.safe_dump(recorded_cases, sort_keys=False), encoding="utf-8")
    error = _error(listed)
    assert str(error).startswith(f"{listed}:")
    assert str(error).endswith("[2].id: duplicate case id 'conflict-1'")
    assert error.line is not None
    assert listed.read_text(encoding="utf-8").splitlines()[error.line - 1].startswith("- ")


@pytest.mark.parametrize("name", ["cases.csv", "cases.txt", "cases"])
def test_unsupported_extension(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text('{"id": "a"}\n', encoding="utf-8")
    error = _error(path)
    assert str(error).startswith(f"{path}: unsupported cases file type")
    assert "expected .jsonl, .yaml, .yml or .json" in str(error)


def test_missing_and_malformed_documents(tmp_path: Path) -> None:
    assert (
        str(_error(tmp_path / "gone.jsonl")) == f"{tmp_path / 'gone.jsonl'}: cases file not found"
    )
    assert str(_error(tmp_path / "gone.yaml")) == f"{tmp_path / 'gone.yaml'}: cases file not found"
    single = tmp_path / "single.yaml"
    single.write_text("id: conflict-1\ninput: hi\n", encoding="utf-8")
    assert str(_error(single)) == f"{single}:1: expected a list of cases"
    broken = tmp_path / "broken.yaml"
    broken.write_text("- id: a\n- id: [b\n", encoding="utf-8")
    assert str(_error(broken)).startswith(f"{broken}:")
    assert "invalid YAML" in str(_error(broken))
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('[{"id": "a"},\n {"id": "b"}', encoding="utf-8")
    assert str(_error(bad_json)).startswith(f"{bad_json}:2: invalid JSON")


def test_jsonl_lines_the_fast_parser_refuses_read_as_json_allows(tmp_path: Path) -> None:
    # orjson reads most lines; integers beyond 64 bits, NaN and a CRLF end after a BOM go
    # through pydantic's parser and read the same as they always did
    path = tmp_path / "cases.jsonl"
    path.write_bytes(
        b'\xef\xbb\xbf{"id": "big", "ground_truth": {"n": 123456789012345678901234567890}}\r\n'
        b'{"id": "nan", "ground_truth": {"x": NaN}}\n'
        b'{"id": "plain", "trace": [{"kind": "tool_call", "name": "f", '
        b'"arguments": "{\\"a\\": 1}"}]}'
    )
    big, nan, plain = iter_cases(path)
    assert big.id == "big"
    assert big.ground_truth == {"n": 123456789012345678901234567890}
    assert nan.ground_truth["x"] != nan.ground_truth["x"]  # NaN, as json.loads reads it
    assert plain.trace[0].arguments == {"a": 1}


def test_a_jsonl_line_not_utf8_names_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "b\xff"}\n')
    error = _error(path)
    assert error.line == 2
    assert "byte 0xff at column 10" in str(error)
