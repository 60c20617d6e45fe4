"""``SeenIds``: a run's case ids in a few bytes each, agreeing with a set of the ids."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkweigh.core import _seen
from checkweigh.core._seen import SeenIds


@given(st.lists(st.text(max_size=12), max_size=300))
def test_agrees_with_a_set(ids: list[str]) -> None:
    seen, exact = SeenIds(), set[str]()
    for position, case_id in enumerate(ids):
        new = case_id not in exact
        assert (case_id in seen) is not new
        assert seen.add(case_id, position) is new
        exact.add(case_id)
        assert seen.first_seen(case_id) == ids.index(case_id)
    assert len(seen) == len(exact)


def test_positions_are_optional() -> None:
    counted = SeenIds(positions=False)
    assert counted.add("c-1")
    assert counted.add("c-2")
    assert not counted.add("c-1")
    assert counted.first_seen("c-1") == -1
    assert counted.first_seen("c-3") is None
    assert len(counted) == 2


def test_ids_that_share_a_hash_are_reported_as_maybe(monkeypatch: pytest.MonkeyPatch) -> None:
    # two different ids with one hash: the set says "maybe, first at 0", and the caller that
    # must be exact looks there (see the run's duplicate-id check)
    monkeypatch.setattr(_seen, "id_hash", lambda text: len(text))
    seen = SeenIds()
    assert seen.add("case-a", 0)
    assert seen.first_seen("case-b") == 0
    assert not seen.add("case-b", 7)


def test_ids_take_a_few_bytes_each() -> None:
    ids = [f"airline-task-{i:07d}-trial-0" for i in range(200_000)]
    tracemalloc.start()
    try:
        seen = SeenIds()
        for position, case_id in enumerate(ids):
            seen.add(case_id, position)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(seen) == len(ids)
    # 16 bytes of hash and position, arrays growing in steps: well under a set of the ids
    # (its slots alone ~35 bytes an id, and it keeps every id string alive: ~75 more)
    assert held / len(ids) < 30, held / len(ids)


def test_ids_added_at_once_are_noted_as_added_one_by_one() -> None:
    ids = [f"case-{i:05d}" for i in range(5_000)]
    one_by_one, at_once = SeenIds(), SeenIds()
    for i, case_id in enumerate(ids):
        assert one_by_one.add(case_id, 100 + i)
    assert at_once.add_all(ids[:3_000], 100) == 3_000
    assert at_once.add_all(ids, 100, 3_000) == 5_000
    assert len(at_once) == len(one_by_one) == 5_000
    assert [at_once.first_seen(i) for i in ids] == [one_by_one.first_seen(i) for i in ids]
    # the first whose hash was seen stops it, nothing after it noted
    assert at_once.add_all(["new-1", ids[7], "new-2"], 0) == 1
    assert "new-1" in at_once
    assert "new-2" not in at_once
    assert at_once.first_seen(ids[7]) == 107
