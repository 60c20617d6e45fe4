"""Helpers for the importer tests: the fixture logs, a compact view of a trace, JSONL files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from checkweigh.core import Case
from checkweigh.importers import ImportContext, OnBadRecord, get_format, import_cases

FIXTURES = Path(__file__).parent.parent / "importers" / "fixtures"


def load(
    fmt: str, *paths: Path, on_bad_record: OnBadRecord = "fail", **options: Any
) -> tuple[list[Case], ImportContext]:
    """Every case ``paths`` give as ``fmt``, and the import's tally."""
    ctx = ImportContext(on_bad_record=on_bad_record)
    cases = list(import_cases(get_format(fmt, **options), paths, ctx))
    return cases, ctx


def shape(case: Case) -> list[tuple[Any, ...]]:
    """Each step as (kind, name or the first words of its content, id, error)."""
    rows: list[tuple[Any, ...]] = []
    for step in case.trace:
        label = step.name if step.name is not None else " ".join((step.content or "").split()[:3])
        rows.append((step.kind, label, step.id, step.error))
    return rows


def write_jsonl(path: Path, *records: Any) -> Path:
    """``records`` as JSONL (each a Python value, or a raw line when given as text)."""
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
