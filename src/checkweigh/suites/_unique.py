"""Refusing a JSONL cases file's repeated ids, exactly, in 16 bytes an id.

A reader notes each case's id; the first case whose id came before ends the run with a
one-line error. The ids are kept as hashes with where they were seen (:class:`SeenIds`), so
reading a million cases does not hold a million strings. A hash seen before is confirmed by
reading the id where it was first seen: only a true repeat is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ..core import SeenIds


class UniqueIds:
    """The case ids of one file, as its cases are read in order; ``id_at(position)`` reads
    again the id of the case at a position noted before (a line number, or the case's
    index: whatever the reader passes to :meth:`earlier`)."""

    __slots__ = ("_id_at", "_seen", "_shared_hash")

    def __init__(self, id_at: Callable[[int], str | None]) -> None:
        self._id_at = id_at
        self._seen = SeenIds()
        # ids whose hash an earlier, different id has, by where they were first seen: a dict
        # of ids for these few (for a million ids, almost never one)
        self._shared_hash: dict[str, int] = {}

    def __len__(self) -> int:
        """Distinct ids noted."""
        return len(self._seen) + len(self._shared_hash)

    def earlier(self, case_id: str, position: int) -> int | None:
        """Where an earlier case with ``case_id`` is, or None (and ``position`` noted)."""
        if self._seen.add(case_id, position):
            return None
        shared = self._shared_hash.get(case_id)
        if shared is not None:
            return shared
        first = self._seen.first_seen(case_id)
        if first is not None and self._id_at(first) == case_id:
            return first
        self._shared_hash[case_id] = position
        return None

    def first_repeated(self, case_ids: Sequence[str], start: int) -> tuple[int, int] | None:
        """:meth:`earlier` for ``case_ids`` at positions ``start``, ``start + 1``, ... in one
        call: the index of the first whose id came before, with where the earlier one is, or
        None (every one noted)."""
        i = 0
        while (i := self._seen.add_all(case_ids, start, i)) < len(case_ids):
            # a hash seen before: a repeated id, or another id's hash (confirmed as earlier())
            earlier = self.earlier(case_ids[i], start + i)
            if earlier is not None:
                return i, earlier
            i += 1
        return None


def id_on_line(path: Path, lineno: int) -> str | None:
    """The id of the case on line ``lineno`` of the JSONL file ``path`` (read again: this
    runs only when a hash was seen before), or None when no case is there."""
    for n, raw in _numbered(path):
        if n == lineno:
            return _id_of(path, n, raw)
        if n > lineno:
            break
    return None


def id_of_case(path: Path, index: int) -> str | None:
    """The id of the ``index``-th case (from 0: blank lines are not cases) of the JSONL file
    ``path``, or None past its end."""
    from ._cases import is_blank

    seen = 0
    for n, raw in _numbered(path):
        if is_blank(raw):
            continue
        if seen == index:
            return _id_of(path, n, raw)
        seen += 1
    return None


def _numbered(path: Path) -> Iterator[tuple[int, bytes]]:
    # imported here: the readers in ._cases use this module
    from ._cases import numbered_lines

    return numbered_lines(path)


def _id_of(path: Path, lineno: int, raw: bytes) -> str | None:
    from ._cases import case_of_line, is_blank

    return None if is_blank(raw) else case_of_line(path, lineno, raw).id
