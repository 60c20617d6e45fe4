"""Reading cases from JSONL (streamed, one case a line) or from a YAML / JSON list."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError
from pydantic_core import from_json

from ..core import Case, ScriptedUser, SimulatedUser, Step
from ..errors import CaseFileError
from ._errors import describe, loc_text, pick
from ._text import BOM, TextFileError, decode_utf8, read_text, shown
from ._yaml import YamlSyntaxError, load_yaml

_STREAMED = (".jsonl", ".ndjson")
DOCUMENT_LIMIT = 512 * 2**20
"""The largest YAML or JSON cases file read whole; bigger sets belong in streamed JSONL."""
_CASE_KEYS = frozenset(Case.model_fields) | frozenset(Step.model_fields)
_CASE_KEYS |= frozenset(ScriptedUser.model_fields) | frozenset(SimulatedUser.model_fields)
_JSON_AT = re.compile(r" at line (\d+) column (\d+)\Z")
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 19
_BUFFER = 2**20
_validate = Case.__pydantic_validator__.validate_python  # Case.model_validate, one call less


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The file's lines as bytes with their numbers (a leading BOM is dropped)."""
    try:
        if path.is_dir():
            raise CaseFileError("is a folder; expected a cases file", file=path)
        # a buffer well beyond a line: with the default 8 KB, a 14 KB case line is read in
        # pieces and joined, which costs more than parsing a third of it
        with path.open("rb", buffering=_BUFFER) as fh:
            for lineno, raw in enumerate(fh, start=1):
                yield lineno, raw[len(BOM) :] if lineno == 1 and raw.startswith(BOM) else raw
    except FileNotFoundError:
        raise CaseFileError("cases file not found", file=path) from None
    except OSError as exc:
        raise CaseFileError(f"cannot read: {exc.strerror or exc}", file=path) from None


def _json_error(message: str, line: int | None = None) -> tuple[str, int | None]:
    """jiter's ``... at line 2 column 4`` as the file's line and ``... at column 4``."""
    found = _JSON_AT.search(message)
    if found is None:
        return f"invalid JSON: {message}", line
    at = int(found.group(1)) + (line - 1 if line else 0)
    return f"invalid JSON: {message[: found.start()]} at column {found.group(2)}", at


def count_cases(path: Path) -> int:
    """How many cases the file holds, validating every one of them on the way.

    A run calls this before it starts, so a bad case anywhere in the file is one error and
    nothing stored; JSONL is still streamed, so memory stays flat.

    Raises:
        CaseFileError: as :func:`iter_cases`.
    """
    return sum(1 for _ in iter_cases(path))


def iter_cases(path: str | Path) -> Iterator[Case]:
    """Yield the cases of a file in order, validating each.

    JSONL is streamed line by line, so memory stays flat however large the file is.

    Raises:
        CaseFileError: naming the file, the line, the field and what was expected; raised
            when the bad case is reached, after the good ones before it were yielded.
    """
    path = Path(path)
    if path.suffix in _STREAMED:
        for case, _ in iter_jsonl(path):
            yield case
    elif path.suffix in (".yaml", ".yml", ".json"):
        yield from _iter_document(path)
    else:
        raise CaseFileError(
            f"unsupported cases file type '{path.suffix}'; expected .jsonl, .yaml, .yml or .json",
            file=path,
        )


def iter_sourced(path: str | Path) -> Iterator[tuple[Case, bytes | None]]:
    """:func:`iter_cases` with each case's JSON line as read (None for YAML and JSON
    documents, whose cases are not one line each): the store keeps those bytes as the case
    rather than serializing it again."""
    path = Path(path)
    if path.suffix in _STREAMED:
        return iter_jsonl(path)
    return ((case, None) for case in iter_cases(path))


def iter_jsonl(path: Path) -> Iterator[tuple[Case, bytes]]:
    """The cases of a JSONL file with their lines (without the line break)."""
    seen: set[str] = set()
    for lineno, raw in _lines(path):
        case = _fast_case(raw)
        if case is None:
            line = _checked_line(path, lineno, raw)
            if line is None:
                continue
            case = _slow_case(path, lineno, line)
        if case.id in seen:
            raise CaseFileError(
                f"duplicate case id {shown(case.id)}", file=path, line=lineno, field="id"
            )
        seen.add(case.id)
        yield case, raw.rstrip(b"\r\n")


def _fast_case(raw: bytes) -> Case | None:
    """The line parsed by orjson and validated, or None when it must take the slow path: a line
    orjson refuses or that is not a valid case (pydantic's parser then tells where), or one
    with a run of 19 digits, which may be an integer orjson would read as a float."""
    if _LONG_DIGITS in raw.translate(_DIGITS_AS_ZERO):
        return None
    try:
        case: Case = _validate(orjson.loads(raw))
    except (orjson.JSONDecodeError, ValidationError):
        return None
    return case


def _checked_line(path: Path, lineno: int, raw: bytes) -> str | None:
    """The line as text without its end, None for a blank one; bytes that are not UTF-8 are
    an error naming the line and column."""
    try:
        line = decode_utf8(raw, first_line=lineno)
    except TextFileError as exc:
        raise CaseFileError(str(exc), file=path, line=exc.line) from None
    return line.rstrip("\r\n") if line.strip() else None


def _slow_case(path: Path, lineno: int, line: str) -> Case:
    """The line validated by pydantic's JSON parser; its error as the file's error."""
    try:
        return Case.model_validate_json(line)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        if err["type"] == "json_invalid":
            message, _ = _json_error((err.get("ctx") or {}).get("error", "invalid"))
            raise CaseFileError(message, file=path, line=lineno) from None
        found = describe(pick(exc), _CASE_KEYS, _loads(line))
        raise CaseFileError(
            found.message, file=path, line=lineno, field=loc_text(found.loc) or None
        ) from None


def _loads(line: str) -> Any:
    """A line that parsed once, parsed again to tell the user's keys in an error's location."""
    try:
        return from_json(line)
    except ValueError:  # pragma: no cover - the line was valid JSON a moment ago
        return None


def _iter_document(path: Path) -> Iterator[Case]:
    try:
        text = read_text(path, limit=DOCUMENT_LIMIT, what="cases file")
    except FileNotFoundError:
        raise CaseFileError("cases file not found", file=path) from None
    except TextFileError as exc:
        raise CaseFileError(str(exc), file=path, line=exc.line) from None
    except OSError as exc:
        raise CaseFileError(f"cannot read: {exc.strerror or exc}", file=path) from None
    if path.suffix == ".json":
        try:
            # jiter: nesting and number size are bounded, and every error has a line
            data = from_json(text)
        except ValueError as exc:
            message, line = _json_error(str(exc))
            raise CaseFileError(message, file=path, line=line) from None
        lines = None
    else:
        try:
            data, lines = load_yaml(text)
        except YamlSyntaxError as exc:
            raise CaseFileError(f"invalid YAML: {exc}", file=path, line=exc.line) from None
    if isinstance(data, dict) and "cases" in data and len(data) == 1:
        data = data["cases"]
        prefix: tuple[str | int, ...] = ("cases",)
    else:
        prefix = ()
    if not isinstance(data, list):
        raise CaseFileError("expected a list of cases", file=path, line=1)
    seen: set[str] = set()
    for i, raw in enumerate(data):
        line = lines.line((*prefix, i)) if lines else None
        try:
            case = Case.model_validate(raw)
        except ValidationError as exc:
            found = describe(pick(exc), _CASE_KEYS, raw)
            if lines:
                line = lines.line((*prefix, i, *found.at))
            field = f"[{i}]" + ("." + loc_text(found.loc) if found.loc else "")
            raise CaseFileError(found.message, file=path, line=line, field=field) from None
        if case.id in seen:
            raise CaseFileError(
                f"duplicate case id {shown(case.id)}", file=path, line=line, field=f"[{i}].id"
            )
        seen.add(case.id)
        yield case


def case_of_line(path: Path, lineno: int, raw: bytes) -> Case:
    """One non-blank line of a JSONL cases file as :func:`iter_jsonl` reads it (a worker
    process parses the lines the driver hands it; the driver skips blank lines and checks
    that ids are unique).

    Raises:
        CaseFileError: as :func:`iter_cases`, naming ``path`` and ``lineno``.
    """
    case = _fast_case(raw)
    if case is None:
        line = _checked_line(path, lineno, raw)
        if line is None:
            raise CaseFileError("expected a case, got a blank line", file=path, line=lineno)
        case = _slow_case(path, lineno, line)
    return case


def is_blank(raw: bytes) -> bool:
    """Whether :func:`iter_jsonl` skips the line: only whitespace (Unicode's included)."""
    kept = raw.strip()
    if not kept:
        return True
    if kept[0] < 0x80 and not chr(kept[0]).isspace():  # a case's "{", or any JSON text
        return False
    try:
        return not raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        return False


def numbered_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The lines of a JSONL cases file with their numbers, as :func:`iter_jsonl` reads them
    (a leading BOM dropped), for a driver that hands them to worker processes unparsed.

    Raises:
        CaseFileError: the file cannot be read.
    """
    return _lines(path)
