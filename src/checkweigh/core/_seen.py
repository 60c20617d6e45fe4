"""Case ids seen so far in a run, in 16 bytes each however long the ids are.

A run refuses a cases file whose ids repeat, and counts its distinct cases. A ``set`` of the
ids costs ~130 bytes a case (the string and its slot), which a run of a million recorded cases
feels: the memory of the process that reads them would grow with the file. Here an id is
kept as its 64-bit hash beside the position where it was first seen, in sorted arrays.

Two different ids can share a hash (for a million ids, about one run in 10^10 has such a
pair). :meth:`SeenIds.first_seen` therefore answers "maybe, at this position": a caller that
must be exact (refusing a duplicate stops the run) confirms by looking at that position.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence

_BUCKETS = 4096
"""Buckets the hashes are spread over: each stays a short sorted array, so inserting into it
(a ``memmove``) is cheap for tens of millions of ids."""
_MASK = _BUCKETS - 1

id_hash = hash
"""An id's 64-bit hash (Python's own, salted per process: a run's ids are compared only in
the process that reads them). A test may replace it to make ids collide."""


class SeenIds:
    """Ids seen so far, each with the position (line, index) where it was first seen, or
    without positions (``positions=False``: 8 bytes an id) for a caller that only counts."""

    __slots__ = ("_count", "_hashes", "_positions")

    def __init__(self, *, positions: bool = True) -> None:
        self._hashes: list[array[int] | None] = [None] * _BUCKETS
        self._positions: list[array[int] | None] | None = [None] * _BUCKETS if positions else None
        self._count = 0

    def __len__(self) -> int:
        """Distinct hashes seen: the distinct ids, unless two of them share a hash."""
        return self._count

    def first_seen(self, case_id: str) -> int | None:
        """The position an id with ``case_id``'s hash was first seen at (-1 when positions are
        not kept), or None."""
        h = id_hash(case_id)
        hashes = self._hashes[h & _MASK]
        if hashes is None:
            return None
        i = bisect_left(hashes, h)
        if i < len(hashes) and hashes[i] == h:
            if self._positions is None:
                return -1
            positions = self._positions[h & _MASK]
            assert positions is not None
            return positions[i]
        return None

    def add(self, case_id: str, position: int = -1) -> bool:
        """Note ``case_id`` at ``position``; False (and nothing noted) when its hash was seen."""
        return self.add_all((case_id,), position) == 1

    def add_all(self, case_ids: Sequence[str], start: int, first: int = 0) -> int:
        """:meth:`add` each of ``case_ids[first:]`` at ``start`` plus its index, in order, until
        one whose hash was seen; that one's index (nothing noted for it or after it), or
        ``len(case_ids)``: one call for a chunk of ids, without a call per id."""
        hashes_of, positions_of = self._hashes, self._positions
        for i in range(first, len(case_ids)):
            h = id_hash(case_ids[i])
            b = h & _MASK
            hashes = hashes_of[b]
            if hashes is None:
                hashes = hashes_of[b] = array("q")
                if positions_of is not None:
                    positions_of[b] = array("q")
            at = bisect_left(hashes, h)
            if at < len(hashes) and hashes[at] == h:
                return i
            hashes.insert(at, h)
            if positions_of is not None:
                positions = positions_of[b]
                assert positions is not None
                positions.insert(at, start + i)
            self._count += 1
        return len(case_ids)

    def __contains__(self, case_id: object) -> bool:
        """Whether an id with ``case_id``'s hash was seen (maybe another id: see the module)."""
        return isinstance(case_id, str) and self.first_seen(case_id) is not None
