"""Duplicate case ids are refused with a few bytes a case: fingerprints, confirmed in full.

The ids an import has seen are kept as 64-bit fingerprints; a matching fingerprint is only a
hint, confirmed by reading the earlier id back. These tests force fingerprints to collide
(ids whose hash is the same) to show that different ids are never taken for one another,
and import large logs with duplicates to show each is found, with where its first copy was.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from checkweigh.errors import CaseFileError
from checkweigh.importers import ImportContext, get_format, import_cases
from checkweigh.importers._seen import SeenIds


class Colliding(str):
    """An id whose fingerprint is the same as every other Colliding id's."""

    __slots__ = ()

    def __hash__(self) -> int:
        return 42


def test_ids_that_share_a_fingerprint_are_both_kept_and_each_still_refused_again() -> None:
    seen = SeenIds()
    # 200 ids with one fingerprint among 3000 others, so the table grows around them
    ids: list[str] = []
    for i in range(3200):
        ids.append(Colliding(f"case-{i}") if i % 16 == 0 else f"case-{i}")
    for i, case_id in enumerate(ids):
        assert seen.add(case_id, "log.jsonl", i + 1) is None, case_id
    assert len(seen) == 3200
    for i in (0, 16, 1600, 3184, 5, 3199):
        again = Colliding(f"case-{i}") if i % 16 == 0 else f"case-{i}"
        assert seen.add(again, "other.jsonl", 7) == ("log.jsonl", i + 1)
    assert seen.add(Colliding("case-3200"), "other.jsonl", 8) is None


def test_where_an_id_first_was_comes_back_as_given() -> None:
    seen = SeenIds()
    assert seen.add("a", "logs/one.jsonl", 12) is None
    assert seen.add("b\ud800", "two.json", "record 3") is None  # lone surrogate, from \ud800
    assert seen.add("é" * 500, "two.json", "") is None
    assert seen.add("a", "x", 1) == ("logs/one.jsonl", 12)
    assert seen.add("b\ud800", "x", 1) == ("two.json", "record 3")
    assert seen.add("é" * 500, "x", 1) == ("two.json", "")
    assert seen.add("b", "x", 1) is None


def test_memory_is_a_few_bytes_an_id() -> None:
    ids = [f"airline-{i:07d}-conversation" for i in range(50_000)]
    seen = SeenIds()
    tracemalloc.start()
    try:
        for i, case_id in enumerate(ids):
            seen.add(case_id, "log.jsonl", i + 1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # a dict of the ids and where each was took about 130 bytes an id (not counting the ids)
    assert peak / len(ids) < 48, peak / len(ids)


def _conversations(path: Path, ids: list[str]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for case_id in ids:
            messages = [
                {"role": "user", "content": f"Where is my order {case_id}?"},
                {"role": "assistant", "content": "On its way."},
            ]
            fh.write(json.dumps({"id": case_id, "messages": messages}) + "\n")
    return path


def test_duplicates_across_large_logs_are_each_found_with_their_first_place(
    tmp_path: Path,
) -> None:
    first = [f"order-{i}" for i in range(6000)]
    # the second log repeats some ids of the first and one of its own
    second = ["order-5999", "fresh-1", "order-0", "fresh-2", "fresh-1", "order-3071"]
    a = _conversations(tmp_path / "a.jsonl", first)
    b = _conversations(tmp_path / "b.jsonl", second)
    ctx = ImportContext(on_bad_record="skip")
    cases = list(import_cases(get_format("openai"), [a, b], ctx))
    assert [c.id for c in cases[6000:]] == ["fresh-1", "fresh-2"]
    assert (ctx.records, ctx.cases, ctx.skipped_total) == (6006, 6002, 4)
    assert [bad.one_line() for bad in ctx.skipped] == [
        f"{b}:1: duplicate case id 'order-5999' (first at {a}:6000)",
        f"{b}:3: duplicate case id 'order-0' (first at {a}:1)",
        f"{b}:5: duplicate case id 'fresh-1' (first at {b}:2)",
        f"{b}:6: duplicate case id 'order-3071' (first at {a}:3072)",
    ]


def test_under_fail_the_first_duplicate_ends_the_import(tmp_path: Path) -> None:
    log = _conversations(tmp_path / "log.jsonl", [*(f"c{i}" for i in range(2000)), "c1234"])
    with pytest.raises(CaseFileError) as info:
        list(import_cases(get_format("openai"), [log], ImportContext()))
    assert str(info.value) == f"{log}:2001: duplicate case id 'c1234' (first at {log}:1235)"
