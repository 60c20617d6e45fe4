"""Labels between files and the store: ``checkweigh labels import`` binds each label of a file
to the executions it names (with their fingerprints), ``export`` writes the store's labels back
out with everything needed to import them elsewhere, and :func:`stored_pairs` gives ``align``
the labels the store holds for a run."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core import HumanLabel, Label, LabelPair, LabelSource, NotCompared, Verdict
from ..store import (
    CheckLabels,
    JudgedExecution,
    RunInfo,
    Store,
    criteria,
    judged_executions,
    label_for,
)
from ..suites import shown
from ._labels import STORED, LabelFileError, LabelLine

_ByCheck = dict[str, list[JudgedExecution]]

EXPORT_COLUMNS = ("case", "check", "label", "repeat", "note", *STORED)
"""The columns of an export, in order."""


def labels_of_file(
    store: Store, lines: Sequence[LabelLine], path: Path, *, run: str | None, reviewer: str
) -> list[Label]:
    """The store's labels for the lines of a labels file.

    A line with a fingerprint (an export) is kept as it is. Any other line is bound to the
    executions of its check and case (and repeat, when given) in its run: the line's ``run``
    column, else ``run``.

    Raises:
        LabelFileError: a line names no execution of the run, or has no run to be bound to.
        InputError: the run is not in the store.
    """
    executions: dict[str, tuple[RunInfo, dict[str, str | None], _ByCheck]] = {}

    def executions_of(ref: str) -> tuple[RunInfo, dict[str, str | None], _ByCheck]:
        if ref not in executions:
            info = store.get_run(ref)
            checks = list((info.config.get("checks") or {}).keys())
            executions[ref] = (
                info,
                criteria(info.config, checks),
                judged_executions(store, info.id, checks),
            )
        return executions[ref]

    out = []
    for line, human, extra in lines:
        who = extra.get("reviewer", reviewer)
        if "evidence" in extra or "criterion" in extra:
            out.append(_exported(human, extra, who, path, line))
            continue
        ref = extra.get("run", run)
        if ref is None:
            raise LabelFileError(
                "a label without fingerprints is bound to the run it was made on: give "
                "--run RUN (or a run column)",
                file=path,
                line=line,
                field="run",
            )
        info, fingerprints, by_check = executions_of(ref)
        run_id = info.id
        if human.check not in by_check:
            raise LabelFileError(
                f"run {run_id} has no check {shown(human.check)}",
                file=path,
                line=line,
                field="check",
            )
        matched = [
            e
            for e in by_check[human.check]
            if e.case_id == human.case_id and human.repeat in (None, e.repeat)
        ]
        if not matched:
            repeat = "" if human.repeat is None else f", repeat {human.repeat}"
            raise LabelFileError(
                f"run {run_id} has no verdict of {shown(human.check)} on case "
                f"{shown(human.case_id)}{repeat}",
                file=path,
                line=line,
                field="case",
            )
        seen: set[tuple[str | None, int | None]] = set()
        for execution in matched:
            key = (execution.evidence, None if execution.evidence else execution.repeat)
            if key in seen:  # repeats the judge saw alike share one label
                continue
            seen.add(key)
            out.append(
                label_for(
                    execution,
                    criterion=fingerprints.get(human.check),
                    run_id=run_id,
                    label=human.label,
                    reviewer=who,
                    note=human.note,
                    judge=extra.get("judge", info.config.get("judge")),
                    source=LabelSource.FILE,
                )
            )
    return out


def _exported(
    human: HumanLabel, extra: dict[str, str], reviewer: str, path: Path, line: int
) -> Label:
    created = None
    if "created_at" in extra:
        try:
            created = datetime.fromisoformat(extra["created_at"])
        except ValueError:
            raise LabelFileError(
                f"expected an ISO 8601 time, got {shown(extra['created_at'])}",
                file=path,
                line=line,
                field="created_at",
            ) from None
    return Label(
        check=human.check,
        case_id=human.case_id,
        label=human.label,
        note=human.note,
        reviewer=reviewer,
        criterion=extra.get("criterion"),
        evidence=extra.get("evidence"),
        run_id=extra.get("run"),
        repeat=human.repeat,
        judge=extra.get("judge"),
        verdict=extra.get("verdict"),  # checked yes or no when the file was read
        created_at=created,
        source=LabelSource.FILE,
    )


def export_rows(labels: Iterable[Label]) -> list[dict[str, Any]]:
    """Each label as a row of :data:`EXPORT_COLUMNS`."""
    return [
        {
            "case": label.case_id,
            "check": label.check,
            "label": "yes" if label.label else "no",
            "repeat": label.repeat,
            "note": label.note,
            "reviewer": label.reviewer,
            "criterion": label.criterion,
            "evidence": label.evidence,
            "run": label.run_id,
            "judge": label.judge,
            "verdict": label.verdict,
            "created_at": label.created_at.isoformat() if label.created_at else None,
        }
        for label in labels
    ]


def export_text(labels: Iterable[Label], suffix: str) -> str:
    """The labels as a ``.csv`` or ``.jsonl`` file's text.

    Raises:
        ValueError: ``suffix`` is neither.
    """
    rows = export_rows(labels)
    if suffix == ".csv":
        buffer = io.StringIO(newline="")
        writer = csv.DictWriter(buffer, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
        return buffer.getvalue()
    if suffix in (".jsonl", ".ndjson"):
        return "".join(
            json.dumps({k: v for k, v in row.items() if v is not None}, ensure_ascii=False) + "\n"
            for row in rows
        )
    raise ValueError(f"expected a .csv or .jsonl file, got {suffix or 'no extension'}")


def stored_pairs(labelled: Iterable[CheckLabels]) -> list[LabelPair]:
    """The store's labels on a run as label-verdict pairs for :func:`checkweigh.core.align`:
    each labelled execution with the reviewers' majority (an even split is not compared),
    and each stale label as not compared."""
    pairs = []
    for check in labelled:
        for row in check.executions:
            if not row.labels:
                continue
            e = row.execution
            truth = row.truth
            notes = "; ".join(label.note for label in row.labels if label.note)
            human = HumanLabel(e.case_id, e.check, bool(truth), e.repeat, notes)
            if truth is None:
                pairs.append(LabelPair(human, e.repeat, NotCompared.REVIEWERS_SPLIT))
                continue
            pairs.append(LabelPair(human, e.repeat, Verdict(e.state, e.reason)))
        for _ in range(check.stale_criterion + check.stale_evidence):
            pairs.append(LabelPair(HumanLabel("", check.check, False), None, NotCompared.STALE))
    return pairs
