"""The alignment report on a console, and as JSON. Every piece of user or agent text (case ids,
check names, reasons, notes, paths) is printed as plain text, never read as rich markup, with
its control characters shown escaped (:func:`checkweigh.reports.clean`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..core import AlignmentFigures, AlignmentReport, NotCompared
from ..reports import clean, json_inert, plain

NOT_COMPARED_WORDS = {
    NotCompared.JUDGE_ERRORED: "verdict errored",
    NotCompared.NOT_APPLICABLE: "not applicable",
    NotCompared.AGENT_ERRORED: "agent errored (no verdicts)",
    NotCompared.CHECK_MISSING: "check not in the run",
    NotCompared.REPEAT_MISSING: "repeat not in the run",
    NotCompared.CASE_MISSING: "case not in the run",
    NotCompared.STALE: "stale (made on another criterion or other evidence)",
    NotCompared.REVIEWERS_SPLIT: "reviewers split evenly",
}


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _row(name: Text, f: AlignmentFigures) -> list[Text]:
    interval = "—"
    if f.accuracy_low is not None and f.accuracy_high is not None:
        interval = f"{f.accuracy_low:.2f}-{f.accuracy_high:.2f}"
    return [
        name,
        Text(str(f.compared)),
        Text(_num(f.accuracy)),
        Text(interval),
        Text(_num(f.kappa)),
        Text(f.kappa_band.value if f.kappa_band else "—"),
        Text(_num(f.precision)),
        Text(_num(f.recall)),
        Text(str(sum(f.not_compared.values()))),
    ]


def render_alignment(
    console: Console,
    report: AlignmentReport,
    *,
    run_id: str,
    suite: str,
    labels_path: str,
    labels: int,
) -> None:
    """Print the figures per check, the disagreements and what could not be compared.

    ``labels`` is the number of labels read; each applies to one or more executions.
    """
    console.print(
        Text.assemble(
            ("Judge alignment", "bold"),
            clean(
                f": run {run_id} ({suite}) against {labels_path}: {labels} label(s), "
                f"{report.pairs} label-execution pair(s)"
            ),
        )
    )
    table = Table(header_style="bold")
    for col in ("check", "n", "accuracy", "95% CI", "kappa", "agreement"):
        table.add_column(col, justify="left" if col in ("check", "agreement") else "right")
    table.add_column("precision (yes)", justify="right")
    table.add_column("recall (yes)", justify="right")
    table.add_column("not compared", justify="right")
    for i, check in enumerate(report.checks):
        table.add_row(*_row(plain(check.check), check), end_section=i == len(report.checks) - 1)
    table.add_row(*_row(Text("all checks", style="bold"), report.overall))
    console.print(table)
    notes = [(c.check, c.kappa_note) for c in report.checks if c.compared and c.kappa_note]
    if report.overall.compared and report.overall.kappa_note:
        notes.append(("all checks", report.overall.kappa_note))
    for name, note in notes:
        console.print(plain(f"note: kappa of {name} is {note}", style="dim"))

    disagreements = [d for check in report.checks for d in check.disagreements]
    if disagreements:
        console.print(Text(f"Disagreements ({len(disagreements)})", style="bold"))
        listing = Table(header_style="bold")
        for col in ("check", "case", "repeat", "human", "judge", "judge's reason", "note"):
            listing.add_column(col, overflow="fold")
        for d in disagreements:
            listing.add_row(
                plain(d.check),
                plain(d.case_id),
                Text(str(d.repeat)),
                plain(d.human),
                plain(d.judge),
                plain(d.reason),
                plain(d.note),
            )
        console.print(listing)
    else:
        console.print(Text("No disagreements."))

    skipped = [c for c in report.checks if c.not_compared]
    if skipped:
        console.print(Text("Not compared", style="bold"))
        for check in skipped:
            parts = ", ".join(
                f"{n} {NOT_COMPARED_WORDS[reason]}" for reason, n in check.not_compared.items()
            )
            console.print(plain(f"  {check.check}: {parts}"))


def alignment_document(
    report: AlignmentReport, *, run: dict[str, Any], labels_path: str
) -> dict[str, Any]:
    """The JSON form: the run it was computed on, the labels file and the full report."""
    return {"run": run, "labels": labels_path, **report.model_dump(mode="json")}


def write_alignment_json(
    path: Path, report: AlignmentReport, *, run: dict[str, Any], labels_path: str
) -> None:
    """Write :func:`alignment_document` to ``path``, making its folder if needed.

    Raises:
        OSError: the file cannot be written.
    """
    document = alignment_document(report, run=run, labels_path=labels_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    path.write_text(json_inert(text), encoding="utf-8")
