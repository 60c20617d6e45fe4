"""Reading cases from JSONL (streamed, one case a line) or from a YAML / JSON list."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from ..core import Case
from ..errors import CaseFileError
from ._errors import first_error, loc_text
from ._yaml import YamlSyntaxError, load_yaml

_STREAMED = (".jsonl", ".ndjson")


def _open(path: Path) -> Iterator[str]:
    try:
        with path.open(encoding="utf-8") as fh:
            yield from fh
    except FileNotFoundError:
        raise CaseFileError("cases file not found", file=path) from None
    except UnicodeDecodeError as exc:
        raise CaseFileError(f"not UTF-8 text: {exc.reason}", file=path) from None


def count_cases(path: Path) -> int:
    """How many cases the file holds (cheap for JSONL: it counts non-blank lines)."""
    if path.suffix in _STREAMED:
        return sum(1 for line in _open(path) if line.strip())
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
        yield from _iter_jsonl(path)
    elif path.suffix in (".yaml", ".yml", ".json"):
        yield from _iter_document(path)
    else:
        raise CaseFileError(
            f"unsupported cases file type '{path.suffix}'; expected .jsonl, .yaml, .yml or .json",
            file=path,
        )


def _iter_jsonl(path: Path) -> Iterator[Case]:
    seen: set[str] = set()
    validate = Case.model_validate_json
    for lineno, line in enumerate(_open(path), start=1):
        if not line.strip():
            continue
        try:
            case = validate(line)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            if err["type"] == "json_invalid":
                msg = (err.get("ctx") or {}).get("error", "invalid JSON")
                raise CaseFileError(f"invalid JSON: {msg}", file=path, line=lineno) from None
            loc, message = first_error(exc)
            raise CaseFileError(
                message, file=path, line=lineno, field=loc_text(loc) or None
            ) from None
        if case.id in seen:
            raise CaseFileError(
                f"duplicate case id {case.id!r}", file=path, line=lineno, field="id"
            )
        seen.add(case.id)
        yield case


def _iter_document(path: Path) -> Iterator[Case]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CaseFileError("cases file not found", file=path) from None
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CaseFileError(f"invalid JSON: {exc.msg}", file=path, line=exc.lineno) from None
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
            loc, message = first_error(exc)
            if lines:
                line = lines.line((*prefix, i, *loc))
            field = f"[{i}]" + ("." + loc_text(loc) if loc else "")
            raise CaseFileError(message, file=path, line=line, field=field) from None
        if case.id in seen:
            raise CaseFileError(
                f"duplicate case id {case.id!r}", file=path, line=line, field=f"[{i}].id"
            )
        seen.add(case.id)
        yield case
