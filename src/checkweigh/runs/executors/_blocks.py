"""A JSONL cases file cut into byte ranges of a number of cases each: the driver finds where
each range ends (without copying or sending its lines), a worker process reads its own range.

Both sides skip blank lines as :func:`~checkweigh.suites.numbered_lines` readers do, and
number lines as the file does, so positions and line numbers match an in-process run's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from ...errors import CaseFileError
from ...suites import BOM, is_blank

_BRACE = ord("{")


class Block(NamedTuple):
    """Consecutive lines of a cases file."""

    offset: int
    """Where the first line starts (bytes)."""
    length: int
    """Bytes, up to and including the last line's newline."""
    lineno: int
    """The number of the first line in the file."""


def blocks(path: Path, size: int) -> Iterator[tuple[Block, int]]:
    """The file in blocks of ``size`` non-blank lines (fewer at the end), each with its number
    of non-blank lines (cases); blank lines go with the block after them.

    The file is read a buffer at a time (not mapped: the driver's memory stays flat however
    large the file is).

    Raises:
        CaseFileError: the file cannot be read.
    """
    try:
        fh = path.open("rb", buffering=_BUFFER)
    except FileNotFoundError:
        raise CaseFileError("cases file not found", file=path) from None
    except IsADirectoryError:
        raise CaseFileError("is a folder; expected a cases file", file=path) from None
    except OSError as exc:
        raise CaseFileError(f"cannot read: {exc.strerror or exc}", file=path) from None
    with fh:
        try:
            yield from _cut(fh, size)
        except OSError as exc:
            raise CaseFileError(f"cannot read: {exc.strerror or exc}", file=path) from None


_BUFFER = 1 << 20


def _cut(fh: BinaryIO, size: int) -> Iterator[tuple[Block, int]]:
    first = fh.readline()
    pos = len(BOM) if first.startswith(BOM) else 0
    lines = itertools.chain([first[pos:]], fh) if first else iter(())
    start, lineno, first_line, n = pos, 1, 1, 0
    for raw in lines:
        # a case's line starts with "{": only other lines are looked at closer
        if raw[:1] == b"{" or not is_blank(raw):
            n += 1
        pos += len(raw)
        lineno += 1
        if n == size:
            yield Block(start, pos - start, first_line), n
            start, first_line, n = pos, lineno, 0
    if n:
        yield Block(start, pos - start, first_line), n


def block_lines(path: Path, block: Block, cases: int) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of ``block`` (``cases`` of them) with their numbers, as the file
    has them (each with its newline).

    Raises:
        CaseFileError: the file cannot be read, or changed since it was cut into blocks.
    """
    try:
        with path.open("rb") as fh:
            fh.seek(block.offset)
            data = fh.read(block.length)
    except OSError as exc:
        raise CaseFileError(f"cannot read: {exc.strerror or exc}", file=path) from None
    total = len(data)
    pos = 0
    lineno = block.lineno
    n = 0
    find = data.find
    while pos < total:
        end = find(b"\n", pos)
        end = total if end < 0 else end + 1
        raw = data[pos:end]
        if raw[0] == _BRACE or not is_blank(raw):
            n += 1
            yield lineno, raw
        pos = end
        lineno += 1
    if n != cases or total != block.length:
        raise CaseFileError(
            "the cases file changed while the run was reading it", file=path, line=lineno
        )
