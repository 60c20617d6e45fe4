"""A JSONL file's repeated case ids are refused exactly, even when two ids share a hash."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from checkweigh.core import _seen
from checkweigh.errors import CaseFileError
from checkweigh.suites import count_cases, iter_cases
from checkweigh.suites._unique import UniqueIds, id_of_case, id_on_line


def _write(path: Path, ids: list[str]) -> Path:
    lines = [json.dumps({"id": i, "input": f"book a room for {i}"}) for i in ids]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_repeat_names_the_line_it_repeats(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.jsonl", ["a", "b", "c", "b"])
    unique = UniqueIds(partial(id_on_line, path))
    assert [unique.earlier(i, n) for n, i in enumerate(["a", "b", "c"], 1)] == [None] * 3
    assert unique.earlier("b", 4) == 2
    assert len(unique) == 3


@pytest.mark.parametrize("by", ["line", "case"])
def test_ids_sharing_a_hash_are_not_repeats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by: str
) -> None:
    # every id of the same length collides: only the case read again tells them apart
    monkeypatch.setattr(_seen, "id_hash", len)
    ids = ["t-01", "t-02", "t-03", "t-02", "t-01"]
    path = _write(tmp_path / "cases.jsonl", ids)
    if by == "line":
        unique, at = UniqueIds(partial(id_on_line, path)), [1, 2, 3, 4, 5]
    else:
        unique, at = UniqueIds(partial(id_of_case, path)), [0, 1, 2, 3, 4]
    assert [unique.earlier(i, p) for i, p in zip(ids[:3], at, strict=False)] == [None] * 3
    assert len(unique) == 3
    assert unique.earlier("t-02", at[3]) == at[1]
    assert unique.earlier("t-01", at[4]) == at[0]


def test_readers_refuse_true_repeats_only_when_every_id_collides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_seen, "id_hash", len)
    ok = _write(tmp_path / "ok.jsonl", [f"case-{i:03d}" for i in range(50)])
    assert count_cases(ok) == 50
    assert [c.id for c in iter_cases(ok)] == [f"case-{i:03d}" for i in range(50)]
    bad = _write(tmp_path / "bad.jsonl", ["case-001", "case-002", "case-003", "case-002"])
    for read in (count_cases, lambda p: list(iter_cases(p))):
        with pytest.raises(CaseFileError) as info:
            read(bad)
        assert str(info.value) == f"{bad}:4: id: duplicate case id 'case-002'"


def test_id_lookups_skip_blank_lines_and_stop_early(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "x", "input": "hi"}\n\n{"id": "y", "input": "yo"}\n')
    assert id_on_line(path, 1) == "x"
    assert id_on_line(path, 3) == "y"
    assert id_on_line(path, 2) is None
    assert id_on_line(path, 9) is None
    assert [id_of_case(path, i) for i in range(3)] == ["x", "y", None]


@pytest.mark.parametrize("collide", [False, True], ids=["hashes", "every-id-collides"])
def test_a_chunk_of_ids_checked_at_once_finds_what_one_at_a_time_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collide: bool
) -> None:
    # what the --workers driver does with each chunk's ids: the first true repeat, where the
    # earlier one is, and every id before it noted
    if collide:
        monkeypatch.setattr(_seen, "id_hash", len)
    ids = ["t-01", "t-02", "t-03", "t-04", "t-02", "t-05"]
    path = _write(tmp_path / "cases.jsonl", ids)
    chunked = UniqueIds(partial(id_of_case, path))
    assert chunked.first_repeated(ids[:2], 0) is None
    assert chunked.first_repeated(ids[2:], 2) == (2, 1)  # "t-02" at index 4 repeats index 1
    assert len(chunked) == 4
    one_by_one = UniqueIds(partial(id_of_case, path))
    assert [one_by_one.earlier(i, p) for p, i in enumerate(ids[:4])] == [None] * 4
    assert one_by_one.earlier("t-02", 4) == 1
    assert chunked.first_repeated(["t-05"], 5) is None
    assert len(chunked) == 5
    assert chunked.first_repeated(["t-05"], 6) == (0, 5)
