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

from ..core import AlignmentFigures, AlignmentReport, CheckKind, NotCompared
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
    _render_grades(console, report)
    _render_kinds(console, report)

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
                plain(_said(d.human, d.human_grade)),
                plain(_said(d.judge, d.judge_grade)),
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


def _said(answer: str, grade: float | None) -> str:
    return answer if grade is None else f"{answer} (grade {grade:g})"


def _interval(low: float | None, high: float | None) -> str:
    return "—" if low is None or high is None else f"{low:.2f} to {high:.2f}"


def _render_grades(console: Console, report: AlignmentReport) -> None:
    graded = [c for c in report.checks if c.grades is not None]
    if not graded:
        return
    console.print(Text("Graded metrics against human grades", style="bold"))
    table = Table(header_style="bold")
    table.add_column("check", overflow="fold")
    for col in ("passes at", "graded", "spearman", "95% CI", "kendall tau-b", "mean |diff|"):
        table.add_column(col, justify="right")
    table.add_column("note", overflow="fold")
    for check in graded:
        g = check.grades
        assert g is not None
        table.add_row(
            plain(check.check),
            Text(f"grade {g.threshold:g}"),
            Text(str(g.graded)),
            Text(_num(g.spearman)),
            Text(_interval(g.spearman_low, g.spearman_high)),
            Text(_num(g.kendall_tau_b)),
            Text(_num(g.mean_abs_diff)),
            plain(g.note or ""),
        )
    console.print(table)


KIND_WORDS = {
    CheckKind.BINARY: "yes/no judge checks",
    CheckKind.GRADED: "graded metrics",
    CheckKind.OTHER: "other checks (not an LLM judge)",
}


def _render_kinds(console: Console, report: AlignmentReport) -> None:
    c = report.comparison
    if c is None:
        return
    kinds = {k.kind: k for k in report.kinds}
    binary, graded = kinds[CheckKind.BINARY], kinds[CheckKind.GRADED]
    console.print(Text("Yes/no judge checks against graded metrics", style="bold"))
    table = Table(header_style="bold")
    for col in ("kind", "n", "accuracy", "kappa", "95% CI (bootstrap)", "checks"):
        right = col in ("n", "accuracy", "kappa")
        table.add_column(col, justify="right" if right else "left", overflow="fold")
    for k in (binary, graded):
        table.add_row(
            Text(KIND_WORDS[k.kind]),
            Text(str(k.figures.compared)),
            Text(_num(k.figures.accuracy)),
            Text(_num(k.figures.kappa)),
            Text(_interval(k.kappa_low, k.kappa_high)),
            plain(", ".join(k.checks)),
        )
    console.print(table)
    console.print(plain(comparison_sentence(report)))


def comparison_sentence(report: AlignmentReport) -> str:
    """What the comparison of yes/no judge checks with graded metrics shows, and no more."""
    c = report.comparison
    if c is None:
        return ""
    kinds = {k.kind: k for k in report.kinds}
    b, g = kinds[CheckKind.BINARY].figures, kinds[CheckKind.GRADED].figures
    start = (
        f"On these {c.labels} labels ({b.compared} on yes/no judge checks, {g.compared} on "
        "graded metrics)"
    )
    if b.kappa is None or g.kappa is None or c.difference is None:
        which = "yes/no judge checks" if b.kappa is None else "graded metrics"
        return f"{start}, kappa of the {which} is undefined: the kinds cannot be compared."
    kappas = f"kappa {b.kappa:.2f} against {g.kappa:.2f}"
    spread = _interval(c.difference_low, c.difference_high)
    if c.better is None:
        return (
            f"{start}, neither kind is shown to agree with people better: {kappas}, a "
            f"difference of {c.difference:+.2f} whose 95% interval ({spread}) includes 0."
        )
    winner, loser = (
        ("yes/no judge checks", "graded metrics")
        if c.better is CheckKind.BINARY
        else ("graded metrics", "yes/no judge checks")
    )
    return (
        f"{start}, the {winner} agree with people better than the {loser}: {kappas}, a "
        f"difference of {c.difference:+.2f} (95% interval {spread})."
    )


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
