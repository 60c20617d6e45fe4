"""Reading cases from JSONL (streamed, one case a line) or from a YAML / JSON list."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import Any

import msgspec
import orjson
from pydantic import ValidationError
from pydantic_core import from_json

from .._text import NOT_JSON, json_with_surrogates
from ..core import Case, ScriptedUser, SimulatedUser, Step
from ..errors import CaseFileError
from ._errors import describe, loc_text, pick
from ._fast import fast_case
from ._screen import screened_id
from ._text import BOM, TextFileError, decode_utf8, read_text, shown
from ._unique import UniqueIds, id_on_line
from ._yaml import YamlSyntaxError, load_yaml

STREAMED = (".jsonl", ".ndjson")
DOCUMENT_LIMIT = 512 * 2**20
"""The largest YAML or JSON cases file read whole; bigger sets belong in streamed JSONL."""
_CASE_KEYS = frozenset(Case.model_fields) | frozenset(Step.model_fields)
_CASE_KEYS |= frozenset(ScriptedUser.model_fields) | frozenset(SimulatedUser.model_fields)
_JSON_AT = re.compile(r" at line (\d+) column (\d+)\Z")
_BUFFER = 2**20
_validate = Case.__pydantic_validator__.validate_python  # Case.model_validate, one call less
# msgspec decodes as fast as orjson and reads every integer exactly (orjson reads one past 64
# bits as a float), so a line needs no scan for long digit runs before it is trusted; only a
# line nested too deep for msgspec is read by orjson (see _deep_case), after such a scan
_decode = msgspec.json.Decoder().decode
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 19
_first = itemgetter(0)


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The file's lines as bytes with their numbers (a leading BOM is dropped)."""
    try:
        if path.is_dir():
            raise CaseFileError("is a folder; expected a cases file", file=path)
        # a buffer well beyond a line: with the default 8 KB, a 14 KB case line is read in
        # pieces and joined, which costs more than parsing a third of it
        with path.open("rb", buffering=_BUFFER) as fh:
            first = fh.readline()
            if not first:
                return
            yield 1, first[len(BOM) :] if first.startswith(BOM) else first
            # the rest straight from enumerate: no step of this generator per line
            yield from enumerate(fh, start=2)
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


def count_cases(path: str | Path) -> int:
    """How many cases the file holds, validating every one of them on the way.

    A run calls this before it starts, so a bad case anywhere in the file is one error and
    nothing stored; JSONL is still streamed, so memory stays flat. A JSONL line is screened
    at the speed of decoding it (see :mod:`._screen`); only a line the screen cannot vouch for
    is validated in full, which gives the same error as :func:`iter_cases`.

    Raises:
        CaseFileError: as :func:`iter_cases`.
    """
    path = Path(path)
    if path.suffix not in STREAMED:
        return sum(1 for _ in iter_cases(path))
    seen = UniqueIds(partial(id_on_line, path))
    for lineno, raw in _lines(path):
        case_id = screened_id(raw)
        if case_id is None:
            case = _full_case(path, lineno, raw)
            if case is None:
                continue
            case_id = case.id
        if seen.earlier(case_id, lineno) is not None:
            raise CaseFileError(
                f"duplicate case id {shown(case_id)}", file=path, line=lineno, field="id"
            )
    return len(seen)


def iter_cases(path: str | Path) -> Iterator[Case]:
    """Yield the cases of a file in order, validating each.

    JSONL is streamed line by line, so memory stays flat however large the file is.

    Raises:
        CaseFileError: naming the file, the line, the field and what was expected; raised
            when the bad case is reached, after the good ones before it were yielded.
    """
    path = Path(path)
    if path.suffix in STREAMED:
        # no generator of its own between the reader and the caller: it costs a few
        # percent of reading a recorded case
        return map(_first, iter_jsonl(path, strip=False))
    if path.suffix in (".yaml", ".yml", ".json"):
        return _iter_document(path)
    return _unsupported(path)


def _unsupported(path: Path) -> Iterator[Case]:
    raise CaseFileError(
        f"unsupported cases file type '{path.suffix}'; expected .jsonl, .yaml, .yml or .json",
        file=path,
    )
    yield  # a generator, so that the error is raised where the cases are read, as for others


def iter_sourced(path: str | Path) -> Iterator[tuple[Case, bytes | None]]:
    """:func:`iter_cases` with each case's JSON line as read (None for YAML and JSON
    documents, whose cases are not one line each): the store keeps those bytes as the case
    rather than serializing it again."""
    path = Path(path)
    if path.suffix in STREAMED:
        return iter_jsonl(path)
    return ((case, None) for case in iter_cases(path))


def iter_jsonl(path: Path, *, strip: bool = True) -> Iterator[tuple[Case, bytes]]:
    """The cases of a JSONL file with their lines (without the line break, unless not
    ``strip``)."""
    # ids as hashes (16 bytes a case, not the strings): a million cases read in flat memory
    earlier = UniqueIds(partial(id_on_line, path)).earlier
    fast = fast_case
    for lineno, raw in _lines(path):
        # msgspec builds the case (see ._fast); a line it does not vouch for is validated in
        # full, which reads it the same or says why it is no case
        case = fast(raw) or _full_case(path, lineno, raw)
        if case is None:
            continue
        if earlier(case.id, lineno) is not None:
            raise CaseFileError(
                f"duplicate case id {shown(case.id)}", file=path, line=lineno, field="id"
            )
        yield case, raw.rstrip(b"\r\n") if strip else raw


def _full_case(path: Path, lineno: int, raw: bytes) -> Case | None:
    """A line validated in full, as it was before the fast path: msgspec decodes, pydantic
    validates; a line either of them refuses (not JSON, not UTF-8, not a valid case) takes the
    slow path, where pydantic's own parser tells where. None for a blank line."""
    try:
        case: Case = _validate(_decode(raw))
    except RecursionError:
        case = _deep_case(path, lineno, raw)
    except ValueError:  # msgspec's DecodeError and pydantic's ValidationError
        return _slow_path(path, lineno, raw)
    return case


def _deep_case(path: Path, lineno: int, raw: bytes) -> Case:
    """A line nested deeper than msgspec decodes from where it was called: its limit is the
    interpreter's recursion headroom, so it depends on the caller's stack, and the count before
    a run and the run itself must read every line alike. orjson's limit is fixed (1,024
    levels): it reads the line, unless the line may hold an integer past 64 bits, which orjson
    would read as a float; pydantic's parser reads that one (or says why it cannot)."""
    try:
        if _LONG_DIGITS in raw.translate(_DIGITS_AS_ZERO):
            raise ValueError("may hold an integer orjson would read as a float")
        case: Case = _validate(orjson.loads(raw))
    except ValueError:  # orjson's JSONDecodeError and pydantic's ValidationError too
        slow = _slow_path(path, lineno, raw)
        assert slow is not None  # a blank line is no nesting
        return slow
    return case


def _slow_path(path: Path, lineno: int, raw: bytes) -> Case | None:
    """A line the fast path refused: None when blank, else validated by pydantic's parser,
    which raises the error naming the line, the column or the field."""
    line = _checked_line(path, lineno, raw)
    return None if line is None else _slow_case(path, lineno, line)


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
            data = json_with_surrogates(line)  # valid JSON jiter refuses: a lone "\ud800"
            if data is not NOT_JSON:
                return _document_case(path, lineno, data)
            message, _ = _json_error((err.get("ctx") or {}).get("error", "invalid"))
            raise CaseFileError(message, file=path, line=lineno) from None
        found = describe(pick(exc), _CASE_KEYS, _loads(line))
        raise CaseFileError(
            found.message, file=path, line=lineno, field=loc_text(found.loc) or None
        ) from None


def _document_case(path: Path, lineno: int, data: Any) -> Case:
    """A line read by the standard library (see :func:`json_with_surrogates`), validated."""
    try:
        return Case.model_validate(data)
    except ValidationError as exc:
        found = describe(pick(exc), _CASE_KEYS, data)
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
            data = json_with_surrogates(text)  # valid JSON jiter refuses: a lone "\ud800"
            if data is NOT_JSON:
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
    case = fast_case(raw) or _full_case(path, lineno, raw)
    if case is None:
        raise CaseFileError("expected a case, got a blank line", file=path, line=lineno)
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
