"""What every log format shares: reading records from files, and bad records told, not lost.

A format turns one file into cases (:class:`Format`). The records of a file are read by
:func:`iter_records`: a file may hold one JSON value, a JSON list of them, or JSONL (one a
line, streamed so memory stays flat). A record that cannot be read or converted goes to
:meth:`ImportContext.bad`, which either raises (``fail``) or counts and reports it (``skip``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic_core import from_json

from ..core import Case
from ..errors import CaseFileError

OnBadRecord = Literal["skip", "fail"]
WHOLE_FILE_LIMIT = 512 * 2**20
"""The largest JSON document read whole; bigger logs belong in streamed JSONL."""
_STREAMED = (".jsonl", ".ndjson")


@dataclass(frozen=True, slots=True)
class BadRecord:
    """A record that was skipped: where it is and why."""

    file: str
    line: int | None
    message: str

    def one_line(self) -> str:
        """``FILE:LINE: MESSAGE``."""
        return f"{self.file}{f':{self.line}' if self.line else ''}: {self.message}"


@dataclass(slots=True)
class ImportContext:
    """The choices and the tally of one import: what to do with a bad record, what was read."""

    on_bad_record: OnBadRecord = "fail"
    records: int = 0
    """Records read (good and bad)."""
    cases: int = 0
    """Cases produced."""
    skipped: list[BadRecord] = field(default_factory=list)
    """The bad records that were skipped, in the order met."""

    def bad(self, file: str | Path, line: int | None, message: str) -> None:
        """Report a bad record: raise under ``fail``, else remember it and go on.

        Raises:
            CaseFileError: one line naming the file, the line and what was wrong.
        """
        if self.on_bad_record == "fail":
            raise CaseFileError(message, file=file, line=line)
        self.skipped.append(BadRecord(str(file), line, " ".join(message.split())))


class Format(Protocol):
    """A log format: the cases one file holds, in order."""

    name: str
    """The name ``checkweigh import`` and ``cases: {format: ...}`` use."""

    def cases(self, path: Path, ctx: ImportContext) -> Iterator[Case]:
        """Yield the file's cases; bad records go to ``ctx.bad``."""
        ...


def iter_records(path: Path, ctx: ImportContext) -> Iterator[tuple[int | None, Any]]:
    """The JSON records of a file with their line numbers (None when not known).

    ``.jsonl`` / ``.ndjson`` files are streamed a line at a time; other files are one JSON
    document: a list gives its items, anything else is one record. A line that is not JSON
    (a truncated last line, say) goes to ``ctx.bad`` with its number.

    Raises:
        CaseFileError: the file cannot be read, or (under ``fail``) a record is not JSON.
    """
    try:
        if path.is_dir():
            raise CaseFileError("is a folder; expected a log file", file=path)
        if path.suffix in _STREAMED:
            with path.open(encoding="utf-8-sig") as fh:
                for lineno, line in enumerate(fh, start=1):
                    if not line.strip():
                        continue
                    ctx.records += 1
                    try:
                        yield lineno, from_json(line)
                    except ValueError as exc:
                        ctx.bad(path, lineno, f"invalid JSON: {_jiter_message(exc)}")
            return
        if path.stat().st_size > WHOLE_FILE_LIMIT:
            raise CaseFileError(
                f"larger than {WHOLE_FILE_LIMIT // 2**20} MB; give large logs as JSONL",
                file=path,
            )
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CaseFileError("log file not found", file=path) from None
    except UnicodeDecodeError as exc:
        raise CaseFileError(
            f"not UTF-8 text (byte {exc.start}); expected UTF-8", file=path
        ) from None
    except OSError as exc:
        raise CaseFileError(f"cannot read: {exc.strerror or exc}", file=path) from None
    try:
        data = from_json(text)
    except ValueError as exc:
        raise CaseFileError(f"invalid JSON: {_jiter_message(exc)}", file=path) from None
    if isinstance(data, list):
        for item in data:
            ctx.records += 1
            yield None, item
    else:
        ctx.records += 1
        yield None, data


def _jiter_message(exc: ValueError) -> str:
    return " ".join(str(exc).split())
