"""Reading back a run export (the file ``checkweigh run --json`` writes), so that a run can be
compared without the database it was stored in: CI runners keep no database, only the
``results.json`` kept as an artifact from the main branch.

The file is untrusted input: anything that is not a complete run export ends in one
:class:`~checkweigh.errors.InputError` naming the file, the field and what was expected.
Exports written before a field existed stay readable: only what a comparison needs is required
(the run's id, suite, status and snapshot, and each result's verdicts and scores).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError

from .._text import NOT_JSON, json_with_surrogates
from ..core import CaseResult, PassPolicy, ResultRecord
from ..errors import InputError

_EXPECTED = "expected the file `checkweigh run --json` writes"
# ids the store makes (20261123-204500-a1b2c3) and any other plain token: an id from a file
# ends up in Markdown code spans and URLs, so it may hold nothing that could be markup
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class _Rubric(BaseModel):
    name: str
    weights: dict[str, Any]


class _Config(BaseModel):
    """The parts of the run's snapshot a comparison reads (the rest is kept as it is)."""

    rubrics: list[_Rubric] = []
    thresholds: dict[str, Any] | None = None


class _Run(BaseModel):
    id: str
    suite: str
    status: str
    executions: int | None = None
    abandoned: bool = False
    config: dict[str, Any]


_EXPORT_ADDS = ("case", "evaluated_case")
"""What ``--json`` adds beside each stored record: the case verdict and the evaluated case."""


@dataclass(frozen=True, slots=True)
class RunFile:
    """A complete run read from its export."""

    path: Path
    """The file it was read from."""
    id: str
    """The run's id."""
    suite: str
    """The suite's name."""
    status: str
    """Always ``complete``: an export of an unfinished run is refused."""
    policy: PassPolicy
    """The run's snapshotted thresholds, which decide its cases."""
    results: list[CaseResult]
    """Every execution, in the order of the file."""
    config: dict[str, Any] = field(default_factory=dict)
    """The run's configuration snapshot (judge, check versions...)."""


def _where(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as ``results[3].verdicts.correct_time.state``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _invalid(path: Path, prefix: str, exc: ValidationError) -> InputError:
    first = exc.errors(include_url=False)[0]
    field = _where((prefix, *first["loc"])) if prefix else _where(tuple(first["loc"]))
    return InputError(first["msg"], file=path, field=field)


def _records(path: Path, items: object) -> list[ResultRecord]:
    """The export's results as the stored records they hold."""
    if not isinstance(items, list):
        raise InputError("expected a list of result records", file=path, field="results")
    records = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError("expected a result record", file=path, field=f"results[{i}]")
        try:
            records.append(
                ResultRecord.read({k: v for k, v in item.items() if k not in _EXPORT_ADDS})
            )
        except InputError as exc:
            field = f"results[{i}]" + (f".{exc.field}" if exc.field else "")
            raise InputError(exc.message, file=path, field=field) from None
    return records


def _document(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except IsADirectoryError:
        raise InputError(f"is a folder; {_EXPECTED}", file=path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=path) from None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        data = json_with_surrogates(raw)  # valid JSON orjson refuses: a lone "\ud800"
        if data is NOT_JSON:
            # a gzipped or binary artifact: orjson's "str is not valid UTF-8" would puzzle
            why = "binary, not UTF-8 text" if "UTF-8" in exc.msg else exc.msg
            raise InputError(
                f"not JSON ({why}); {_EXPECTED}", file=path, line=exc.lineno or None
            ) from None
    if not isinstance(data, dict):
        raise InputError(f"a JSON {type(data).__name__}, not a run export; {_EXPECTED}", file=path)
    if "run" not in data and "verdict" in data and "suite" in data:
        raise InputError(f"a comparison (compare --json), not a run export; {_EXPECTED}", file=path)
    for key in ("run", "results"):
        if key not in data:
            raise InputError(f"missing; {_EXPECTED}", file=path, field=key)
    return data


def read_run_file(path: Path) -> RunFile:
    """Read the export at ``path`` and rebuild its results as the store would.

    Raises:
        InputError: the file cannot be read, is not JSON, is not a run export, is the export of
            a run that did not complete, or holds a field of the wrong shape.
    """
    data = _document(path)
    try:
        run = _Run.model_validate(data["run"])
    except ValidationError as exc:
        raise _invalid(path, "run", exc) from None
    if not _RUN_ID.fullmatch(run.id):
        raise InputError(
            "expected a run id of letters, digits, '.', '_' and '-'", file=path, field="run.id"
        )
    if run.status != "complete" or run.abandoned:
        state = "abandoned" if run.abandoned else run.status
        raise InputError(
            f"run {run.id} is {state}; expected the export of a complete run (its gates were "
            "measured on part of the cases)",
            file=path,
            field="run.status",
        )
    try:
        config = _Config.model_validate(run.config)
    except ValidationError as exc:
        raise _invalid(path, "run.config", exc) from None
    try:
        policy = PassPolicy.from_snapshot(config.thresholds)
    except (ValueError, TypeError) as exc:
        raise InputError(str(exc), file=path, field="run.config.thresholds") from None
    records = _records(path, data["results"])
    if run.executions is not None and len(records) != run.executions:
        raise InputError(
            f"the run stored {run.executions} execution(s) but the file holds {len(records)}; "
            "expected the whole export",
            file=path,
            field="results",
        )
    # the same rubric -> checks mapping the store uses to rebuild a stored result
    rubric_checks = {r.name: list(r.weights) for r in config.rubrics}
    results: list[CaseResult] = []
    seen: set[tuple[str, int]] = set()
    for i, record in enumerate(records):
        key = (record.case_id, record.repeat)
        if key in seen:
            raise InputError(
                f"case {record.case_id!r} repeat {record.repeat} appears twice",
                file=path,
                field=f"results[{i}]",
            )
        seen.add(key)
        results.append(record.result(rubric_checks))
    return RunFile(
        path=path,
        id=run.id,
        suite=run.suite,
        status=run.status,
        policy=policy,
        results=results,
        config=run.config,
    )
