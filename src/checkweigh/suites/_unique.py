"""Refusing a JSONL cases file's repeated ids, exactly, in 16 bytes an id.

A reader notes each line's case id; the first line whose id came before ends the run with a
one-line error. The ids are kept as hashes with their line numbers (:class:`SeenIds`), so
reading a million cases does not hold a million strings. A hash seen before is confirmed by
reading the id on the line it was first seen on: only a true repeat is refused.
"""

from __future__ import annotations

from pathlib import Path

from ..core._seen import SeenIds


class UniqueIds:
    """The case ids of one JSONL file, as its lines are read in order."""

    __slots__ = ("_path", "_seen", "_shared_hash")

    def __init__(self, path: Path) -> None:
        self._path = path
        self._seen = SeenIds()
        # ids whose hash an earlier, different id has, by the line they were first on: a set
        # of ids for these few (for a million ids, almost never one)
        self._shared_hash: dict[str, int] = {}

    def __len__(self) -> int:
        """Distinct ids noted."""
        return len(self._seen) + len(self._shared_hash)

    def earlier_line(self, case_id: str, lineno: int) -> int | None:
        """The line an earlier case with ``case_id`` is on, or None (and ``lineno`` noted)."""
        if self._seen.add(case_id, lineno):
            return None
        shared = self._shared_hash.get(case_id)
        if shared is not None:
            return shared
        first = self._seen.first_seen(case_id)
        if first is not None and id_on_line(self._path, first) == case_id:
            return first
        self._shared_hash[case_id] = lineno
        return None


def id_on_line(path: Path, lineno: int) -> str | None:
    """The id of the case on line ``lineno`` of the JSONL file ``path`` (read again: this
    runs only when a hash was seen before), or None when no case is there."""
    # imported here: the readers in ._cases use this module
    from ._cases import case_of_line, is_blank, numbered_lines

    for n, raw in numbered_lines(path):
        if n == lineno:
            return None if is_blank(raw) else case_of_line(path, n, raw).id
        if n > lineno:
            break
    return None
