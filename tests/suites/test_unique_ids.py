"""A JSONL file's repeated case ids are refused exactly, even when two ids share a hash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkweigh.core import _seen
from checkweigh.suites._unique import UniqueIds, id_on_line


def _write(path: Path, ids: list[str]) -> Path:
    lines = [json.dumps({"id": i, "input": f"book a room for {i}"}) for i in ids]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_repeat_names_the_line_it_repeats(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.jsonl", ["a", "b", "c", "b"])
    unique = UniqueIds(path)
    assert [unique.earlier_line(i, n) for n, i in enumerate(["a", "b", "c"], 1)] == [None] * 3
    assert unique.earlier_line("b", 4) == 2
    assert len(unique) == 3


def test_ids_sharing_a_hash_are_not_repeats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every id of the same length collides: only the line read again tells them apart
    monkeypatch.setattr(_seen, "id_hash", len)
    ids = ["t-01", "t-02", "t-03", "t-02", "t-01"]
    path = _write(tmp_path / "cases.jsonl", ids)
    unique = UniqueIds(path)
    assert unique.earlier_line("t-01", 1) is None
    assert unique.earlier_line("t-02", 2) is None
    assert unique.earlier_line("t-03", 3) is None
    assert len(unique) == 3
    assert unique.earlier_line("t-02", 4) == 2
    assert unique.earlier_line("t-01", 5) == 1


def test_id_on_line_skips_blank_lines_and_stops_early(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "x", "input": "hi"}\n\n{"id": "y", "input": "yo"}\n')
    assert id_on_line(path, 1) == "x"
    assert id_on_line(path, 3) == "y"
    assert id_on_line(path, 2) is None
    assert id_on_line(path, 9) is None
