"""The case ids an import has seen, kept in a few bytes each, so memory stays flat.

An import refuses a case whose id an earlier case has, and says where the first one was.
Keeping every id (and where it was) in a dict costs about 130 bytes a case, which grows with
the log. Here memory holds only a 64-bit fingerprint per id and where its entry starts in a
spill file (an unnamed temporary file, on disk); the table that finds a fingerprint holds 4
bytes a slot. In all about 24 to 32 bytes a case.

A fingerprint is only a hint: when a new id's fingerprint matches an earlier one, the earlier
id is read back from the spill file and compared in full. Two different ids that share a
fingerprint are therefore both kept (no case is lost), and a duplicate is reported only when
the ids are equal.
"""

from __future__ import annotations

import io
import struct
import tempfile
import weakref
from array import array
from typing import IO

_MASK64 = 2**64 - 1
_FIRST_SLOTS = 1024
_ENTRY = struct.Struct("<III?")
"""A spill entry's head: the id's length in bytes, the where's length, the file's number, and
whether the where is a line number (else a label such as ``record 3``)."""


class SeenIds:
    """The ids seen so far and where each first was (a file's name and a line or label)."""

    __slots__ = (
        "__weakref__",
        "_fingerprints",
        "_names",
        "_numbers",
        "_offsets",
        "_slots",
        "_spill",
        "_spill_end",
    )

    def __init__(self) -> None:
        self._fingerprints = array("Q")
        """The n-th id's fingerprint."""
        self._offsets = array("Q")
        """Where the n-th id's entry starts in the spill file."""
        self._slots = array("I", [0]) * _FIRST_SLOTS
        """Open addressing by fingerprint: 1 + the number of the id in a slot, 0 when empty."""
        self._spill: IO[bytes] | None = None
        self._spill_end = 0
        """Where the next entry goes (kept here: asking the file is a system call)."""
        self._names: list[str] = []
        self._numbers: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._fingerprints)

    def add(self, case_id: str, file: str, at: int | str) -> tuple[str, int | str] | None:
        """Remember ``case_id`` as first seen in ``file`` at ``at`` (a line, or a label), or,
        when it was seen before, return where it first was (and remember nothing)."""
        # hash() is SipHash with a per-process key: fingerprints never leave the process
        fingerprint = hash(case_id) & _MASK64
        slots, fingerprints = self._slots, self._fingerprints
        mask = len(slots) - 1
        i = fingerprint & mask
        while n := slots[i]:
            if fingerprints[n - 1] == fingerprint:
                earlier, where = self._entry(n - 1)
                if earlier == case_id:
                    return where
            i = (i + 1) & mask
        slots[i] = len(fingerprints) + 1
        fingerprints.append(fingerprint)
        self._offsets.append(self._write(case_id, file, at))
        if 2 * len(fingerprints) > len(slots):
            self._grow()
        return None

    def _write(self, case_id: str, file: str, at: int | str) -> int:
        spill = self._spill if self._spill is not None else self._open()
        number = self._numbers.get(file)
        if number is None:
            number = self._numbers[file] = len(self._names)
            self._names.append(file)
        # surrogatepass: an id read from \ud800 escapes is still written (and read back) whole
        raw_id = case_id.encode("utf-8", "surrogatepass")
        raw_at = str(at).encode("utf-8", "surrogatepass")
        offset = self._spill_end
        spill.write(_ENTRY.pack(len(raw_id), len(raw_at), number, isinstance(at, int)))
        spill.write(raw_id)
        spill.write(raw_at)
        self._spill_end = offset + _ENTRY.size + len(raw_id) + len(raw_at)
        return offset

    def _entry(self, n: int) -> tuple[str, tuple[str, int | str]]:
        """The n-th id and where it was, read back from the spill file."""
        spill = self._spill
        assert spill is not None  # an id was written before its fingerprint could match
        spill.seek(self._offsets[n])
        id_len, at_len, number, is_line = _ENTRY.unpack(spill.read(_ENTRY.size))
        case_id = spill.read(id_len).decode("utf-8", "surrogatepass")
        at_text = spill.read(at_len).decode("utf-8", "surrogatepass")
        spill.seek(self._spill_end)
        return case_id, (self._names[number], int(at_text) if is_line else at_text)

    def _open(self) -> IO[bytes]:
        try:
            # open as long as the table lives (closed by the finalizer below)
            spill: IO[bytes] = tempfile.TemporaryFile(prefix="checkweigh-ids-")  # noqa: SIM115
        except OSError:  # no writable temporary folder: keep the entries in memory instead
            spill = io.BytesIO()
        # closed when this table goes away, so no open file outlives the import
        weakref.finalize(self, spill.close)
        self._spill = spill
        return spill

    def _grow(self) -> None:
        slots = array("I", [0]) * (2 * len(self._slots))
        mask = len(slots) - 1
        for n, fingerprint in enumerate(self._fingerprints, start=1):
            i = fingerprint & mask
            while slots[i]:
                i = (i + 1) & mask
            slots[i] = n
        self._slots = slots
