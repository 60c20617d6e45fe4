"""What every log format shares: reading records from files, and bad records told, not lost.

A format turns one file into cases (:class:`Format`). The records of a file are read by
:func:`iter_records`: a file may hold one JSON value, a JSON list of them, or JSONL (one a
line, streamed so memory stays flat). A record that cannot be read or converted goes to
:meth:`ImportContext.bad`, which either raises (``fail``) or counts and reports it (``skip``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic_core import from_json

from .._text import NOT_JSON, json_with_surrogates
from ..core import Case
from ..errors import CaseFileError
from ._seen import SeenIds

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


KEPT_REASONS = 100
"""How many skipped records an import remembers one by one (the rest are only counted)."""


@dataclass(slots=True)
class ImportContext:
    """The choices and the tally of one import: what to do with a bad record, what was read."""

    on_bad_record: OnBadRecord = "fail"
    records: int = 0
    """Records read (good and bad)."""
    cases: int = 0
    """Cases produced."""
    skipped: list[BadRecord] = field(default_factory=list)
    """The first :data:`KEPT_REASONS` bad records that were skipped, in the order met."""
    skipped_total: int = 0
    """How many bad records were skipped in all."""
    without_case: dict[str, int] = field(default_factory=dict)
    """Good input that holds no case, counted by why (e.g. OTel traces with no GenAI span)."""
    warnings: list[BadRecord] = field(default_factory=list)
    """The first :data:`KEPT_REASONS` cases made that the import has something to say about
    (an OTel trace with no message content, imported as an errored case)."""
    warnings_total: int = 0
    _seen: SeenIds = field(default_factory=SeenIds, repr=False)

    def bad(self, file: str | Path, line: int | None, message: str) -> None:
        """Report a bad record: raise under ``fail``, else remember it and go on.

        Raises:
            CaseFileError: one line naming the file, the line and what was wrong.
        """
        if self.on_bad_record == "fail":
            raise CaseFileError(message, file=file, line=line)
        self.skipped_total += 1
        if len(self.skipped) < KEPT_REASONS:
            self.skipped.append(BadRecord(str(file), line, " ".join(message.split())))

    def accept(self, case: Case, file: str | Path, line: int | None, *, label: str = "") -> bool:
        """Count a converted case; a case whose id an earlier one has is a bad record.

        Every format calls this for each case before yielding it: ids must be unique across
        all the files of one import. ``label`` starts the message of a record that has no
        line (``record 3: ``).

        Raises:
            CaseFileError: a duplicate id under ``fail``.
        """
        return self.accept_id(case.id, file, line, label=label)

    def accept_id(
        self, case_id: str, file: str | Path, line: int | None, *, label: str = ""
    ) -> bool:
        """:meth:`accept` for a case known by its id (one written without being built).

        Raises:
            CaseFileError: a duplicate id under ``fail``.
        """
        # the ids seen are kept as fingerprints (see SeenIds), so memory stays flat
        first = self._seen.add(case_id, str(file), line if line else label.rstrip(": "))
        if first is not None:
            name, at = first
            where = f"{name}:{at}" if isinstance(at, int) else f"{name} {at}".rstrip()
            self.bad(file, line, f"{label}duplicate case id {short(case_id)} (first at {where})")
            return False
        self.cases += 1
        return True

    def warn(self, file: str | Path, line: int | None, message: str) -> None:
        """Note a case that was made but is worth saying something about."""
        self.warnings_total += 1
        if len(self.warnings) < KEPT_REASONS:
            self.warnings.append(BadRecord(str(file), line, " ".join(message.split())))

    def no_case(self, why: str) -> None:
        """Count input that is well formed but holds no case (said in :meth:`notes`)."""
        self.without_case[why] = self.without_case.get(why, 0) + 1

    def notes(self) -> list[str]:
        """What a report should say about the import: the skipped records and the first
        reasons, and the input that held no case (none when there is nothing to say)."""
        notes = [f"{n} {why}: no case made" for why, n in self.without_case.items()]
        if self.warnings_total:
            shown = "; ".join(w.one_line() for w in self.warnings[:3])
            more = f"; and {self.warnings_total - 3} more" if self.warnings_total > 3 else ""
            notes.append(f"{self.warnings_total} case(s) to look at: {shown}{more}")
        if not self.skipped_total:
            return notes
        shown = "; ".join(b.one_line() for b in self.skipped[:3])
        more = f"; and {self.skipped_total - 3} more" if self.skipped_total > 3 else ""
        return [
            f"{self.skipped_total} bad record(s) of {self.records} skipped "
            f"(on_bad_record: skip): {shown}{more}",
            *notes,
        ]


def short(value: object, limit: int = 60) -> str:
    """A value quoted for a message, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Format(Protocol):
    """A log format: the cases one file holds, in order."""

    name: str
    """The name ``checkweigh import`` and ``cases: {format: ...}`` use."""

    def cases(self, path: Path, ctx: ImportContext) -> Iterator[Case]:
        """Yield the file's cases, streamed. A bad record goes to ``ctx.bad(file, line,
        message)``; each case goes to ``ctx.accept(case, file, line)`` before it is yielded
        (which counts it and refuses a duplicate id)."""
        ...


def import_cases(fmt: Format, paths: Iterable[Path], ctx: ImportContext) -> Iterator[Case]:
    """The cases of ``paths`` read as ``fmt``, in order, streamed; ``ctx`` keeps the tally.

    Raises:
        CaseFileError: a file cannot be read, or (under ``fail``) a record is bad.
    """
    for path in paths:
        counted = ctx.cases
        for case in fmt.cases(path, ctx):
            # a format that did not count its case (ctx.accept) still gets its ids checked
            if ctx.cases == counted and not ctx.accept(case, path, None):
                continue
            counted = ctx.cases
            yield case


def import_lines(fmt: Format, paths: Iterable[Path], ctx: ImportContext) -> Iterator[bytes]:
    """The cases of ``paths`` read as ``fmt`` as lines of checkweigh JSONL (each with its
    newline), in order, streamed: what ``checkweigh import`` writes. Each line holds the keys
    and values ``case.model_dump_json(exclude_defaults=True)`` gives; a format with a
    ``case_lines(path, ctx)`` method writes them itself, most without building the case.

    Raises:
        CaseFileError: as :func:`import_cases`.
    """
    case_lines: Callable[[Path, ImportContext], Iterator[bytes]] | None
    case_lines = getattr(fmt, "case_lines", None)
    if case_lines is None:
        for case in import_cases(fmt, paths, ctx):
            yield case.model_dump_json(exclude_defaults=True).encode() + b"\n"
        return
    for path in paths:
        yield from case_lines(path, ctx)


def iter_records(
    path: Path, ctx: ImportContext, whole: Callable[[list[Any]], bool] | None = None
) -> Iterator[tuple[int | None, Any]]:
    """The JSON records of a file with their line numbers (None when not known).

    ``.jsonl`` / ``.ndjson`` files are streamed a line at a time; other files are one JSON
    document: a list gives its items (unless ``whole`` says the list is itself one record,
    such as one conversation's messages), anything else is one record, and a document that
    turns out to be JSONL (a second value on a later line) is read as JSONL. A line that is not JSON
    or not UTF-8 (a truncated last line, say) goes to ``ctx.bad`` with its number. An empty
    file holds no records.

    Raises:
        CaseFileError: the file cannot be read, or (under ``fail``) a record is not JSON.
    """
    try:
        if path.is_dir():
            raise CaseFileError("is a folder; expected a log file", file=path)
        if path.exists() and not path.is_file():
            raise CaseFileError("is not a regular file; expected a log file", file=path)
        if path.suffix in _STREAMED:
            with path.open("rb") as fh:  # bytes: jiter decodes, and a bad line is one record
                yield from _jsonl(path, fh, ctx)
            return
        if path.stat().st_size > WHOLE_FILE_LIMIT:
            raise CaseFileError(
                f"larger than {WHOLE_FILE_LIMIT // 2**20} MB; give large logs as JSONL",
                file=path,
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise CaseFileError("log file not found", file=path) from None
    except OSError as exc:
        raise CaseFileError(f"cannot read: {exc.strerror or exc}", file=path) from None
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    if not data.strip():
        return
    try:
        document = from_json(data)
    except ValueError as exc:
        document = json_with_surrogates(data)  # valid JSON jiter refuses: a lone "\ud800"
        if document is NOT_JSON:
            message = str(exc)
            found = _JSON_AT.search(message)
            if (
                message.startswith("trailing characters") and found and int(found.group(1)) > 1
            ) or _jsonl_with_surrogates(data):
                yield from _jsonl(path, iter(data.splitlines(keepends=True)), ctx)
                return
            text, line = _json_error(message, data)
            raise CaseFileError(text, file=path, line=line) from None
    if isinstance(document, list) and not (whole is not None and whole(document)):
        for item in document:
            ctx.records += 1
            yield None, item
    else:
        ctx.records += 1
        yield None, document


def _jsonl(
    path: Path, lines: Iterable[bytes], ctx: ImportContext
) -> Iterator[tuple[int | None, Any]]:
    for lineno, line in enumerate(lines, start=1):
        if lineno == 1 and line.startswith(_BOM):
            line = line[len(_BOM) :]
        if not line or line.isspace():
            continue
        ctx.records += 1
        try:
            record = from_json(line)
        except ValueError:
            # parsed again without its newline, so a line cut short says so (not that a
            # newline is a control character in a string)
            try:
                record = from_json(line.rstrip(b"\r\n"))
            except ValueError as exc:
                record = json_with_surrogates(line)
                if record is NOT_JSON:
                    ctx.bad(path, lineno, _json_error(str(exc), line)[0])
                    continue
        yield lineno, record


def _jsonl_with_surrogates(data: bytes) -> bool:
    """Whether ``data`` is JSON Lines whose first line holds an escaped lone surrogate (which
    jiter refused before it could tell that more lines follow)."""
    first, newline, rest = data.lstrip().partition(b"\n")
    return bool(newline and rest.strip()) and json_with_surrogates(first) is not NOT_JSON


_BOM = b"\xef\xbb\xbf"
_JSON_AT = re.compile(r" at line (\d+) column (\d+)\Z")


def _json_error(message: str, data: bytes) -> tuple[str, int | None]:
    """jiter's error as one line and the line it is on (within ``data``); bytes that are not
    UTF-8 are said to be so, with their line and column."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = 1 + data.count(b"\n", 0, exc.start)
        column = exc.start - line_start + 1
        return (
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} at column {column}; expected UTF-8",
            line,
        )
    message = " ".join(message.split())
    at: int | None = None
    found = _JSON_AT.search(message)
    if found is not None:
        at = int(found.group(1))
        message = f"{message[: found.start()]} at column {found.group(2)}"
    if message.startswith("EOF while parsing"):
        message += " (the record is cut short)"
    return f"invalid JSON: {message}", at
