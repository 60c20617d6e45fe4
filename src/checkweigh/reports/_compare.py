"""The comparison report: suite-level changes with their tests, then the cases that moved and
the checks whose pass rates changed. Case ids, check names and reasons are user text: printed
literally, control characters shown escaped (see :mod:`._safe`)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..core import CaseChange, CompareVerdict, Comparison, TaskChange
from ._calibration import CHANGE_COLUMNS, calibrated_change_rows
from ._rejudge import render_split
from ._safe import clean, plain

_SHOWN = 20
_HEADLINE = {
    CompareVerdict.REGRESSION: ("REGRESSION", "bold red"),
    CompareVerdict.NOT_SIGNIFICANT: ("NOT SIGNIFICANT", "bold yellow"),
    CompareVerdict.NO_REGRESSION: ("NO REGRESSION", "bold green"),
}


def _num(x: float | None, fmt: str = ".1f") -> str:
    return "—" if x is None else format(x, fmt)


def _p(p: float | None) -> str:
    if p is None:
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _score(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}"


def _change_line(c: CaseChange) -> Text:
    move = (
        f"{c.base_state} {_score(c.base_score)} -> {c.candidate_state} {_score(c.candidate_score)}"
    )
    style = "red" if c.kind == "regression" else "green"
    return Text.assemble(
        "  ", (clean(f"{c.case_id}#{c.repeat}"), style), clean(f": {move}  ({c.reason})")
    )


TASK_RULE = (
    "pass rate = passes / tries of the task in each run (an errored try is not passed); a task "
    "is listed as dropped when its pass rate is lower in the candidate, by any amount. Each "
    "listing is descriptive: the verdict is the suite-level test's"
)
"""What the per-task listing of a comparison with repeats counts."""


def task_line(c: TaskChange) -> str:
    """``booking-7: 4/5 -> 1/5 passed (80% -> 20%), pass^5 0.00 -> 0.00``."""
    return (
        f"{c.case_id}: {c.base_passes}/{c.base_tries} -> {c.candidate_passes}/"
        f"{c.candidate_tries} passed ({c.base_rate:.0%} -> {c.candidate_rate:.0%}), "
        f"pass^{c.k} {c.base_pass_hat_k:.2f} -> {c.candidate_pass_hat_k:.2f}"
    )


def unpaired_line(cmp: Comparison) -> str:
    """What an unpaired comparison compared: ``unpaired: two monitor windows (40 and 30
    traces)``."""
    return (
        f"unpaired: two monitor windows ({cmp.only_base} and {cmp.only_candidate} traces); "
        "each figure is tested between the windows, no trace is in both"
    )


def explain_comparison(cmp: Comparison) -> str:
    """One sentence on what the verdict means."""
    if cmp.verdict is CompareVerdict.NO_REGRESSION:
        return "no suite-level threshold was exceeded"
    exceeded = ", ".join(d.metric for d in cmp.suite if d.exceeded)
    if cmp.verdict is CompareVerdict.REGRESSION:
        why = "--strict" if cmp.strict and not cmp.significant else f"p < {cmp.alpha:g}"
        return f"threshold exceeded on {exceeded} ({why})"
    if cmp.unpaired:
        return (
            f"threshold exceeded on {exceeded}, but the unpaired test cannot tell it from "
            f"noise (p >= {cmp.alpha:g}): compare longer windows (more traces), or pass "
            "--strict to fail on it"
        )
    return (
        f"threshold exceeded on {exceeded}, but the paired test cannot tell it from noise "
        f"(p >= {cmp.alpha:g}): rerun with more cases or judge samples, or pass --strict to "
        "fail on it"
    )


def render_comparison(console: Console, cmp: Comparison, base: str, candidate: str) -> None:
    """Print the whole comparison."""
    label, style = _HEADLINE[cmp.verdict]
    console.print(
        Text.assemble(("compare ", "bold"), clean(f"{base} -> {candidate}   "), (label, style))
    )
    console.print(plain(explain_comparison(cmp)))
    if cmp.rejudge is not None:
        render_split(console, cmp.rejudge)
    for note in cmp.gates_not_decided:  # user text: the run's reason names no user input
        console.print(plain(f"note: gates not decided in the {note}", style="yellow"))
    if cmp.unpaired:
        console.print(Text(unpaired_line(cmp)))
        console.print(_suite_table(cmp))
        _calibrated(console, cmp)
        _unpaired_checks(console, cmp)
        return
    extra = []
    if cmp.only_base:
        extra.append(f"{cmp.only_base} only in the base")
    if cmp.only_candidate:
        extra.append(f"{cmp.only_candidate} only in the candidate")
    unit = (
        "task(s) tried in both runs, compared task by task"
        if cmp.per_task
        else ("paired execution(s)")
    )
    console.print(Text(f"{cmp.paired} {unit}" + (f" ({', '.join(extra)})" if extra else "")))
    console.print(_suite_table(cmp))
    _calibrated(console, cmp)
    if cmp.per_task:
        _tasks(console, cmp)
    for title, items, style in (
        ("regressions", cmp.regressions, "bold red"),
        ("improvements", cmp.improvements, "bold green"),
    ):
        if not items:
            continue
        console.print(Text(f"{title}: {len(items)} case(s)", style=style))
        for c in items[:_SHOWN]:
            console.print(_change_line(c))
        if len(items) > _SHOWN:
            console.print(Text(f"  ... and {len(items) - _SHOWN} more", style="dim"))
    unchanged = "task(s) with the same pass rate" if cmp.per_task else "case(s)"
    console.print(Text(f"unchanged: {cmp.unchanged} {unchanged}", style="dim"))
    if cmp.reliability:
        shown = {1, 2, cmp.reliability[-1].k}
        parts = [
            f"pass@{r.k} {r.base_pass_at_k:.2f} -> {r.candidate_pass_at_k:.2f}, "
            f"pass^{r.k} {r.base_pass_hat_k:.2f} -> {r.candidate_pass_hat_k:.2f}"
            for r in cmp.reliability
            if r.k in shown
        ]
        console.print(Text("reliability over the paired tries: " + "; ".join(parts)))
    moved = [c for c in cmp.checks if c.change]
    if moved:
        checks = Table(title="checks whose pass rate changed", title_justify="left")
        for col in ("check", "base", "candidate", "change", "pass->fail", "fail->pass", "p"):
            checks.add_column(col, justify="left" if col == "check" else "right")
        for cd in moved:
            checks.add_row(
                plain(cd.check),
                _num(None if cd.base_rate is None else cd.base_rate * 100) + "%",
                _num(None if cd.candidate_rate is None else cd.candidate_rate * 100) + "%",
                "—" if cd.change is None else f"{cd.change * 100:+.1f}",
                str(cd.worse),
                str(cd.better),
                _p(cd.p_value),
            )
        console.print(checks)


def _tasks(console: Console, cmp: Comparison) -> None:
    """The tasks whose pass rate dropped, then those whose rate rose."""
    console.print(plain(f"per task: {TASK_RULE}", style="italic"))
    for title, items, style in (
        ("pass rate dropped", [c for c in cmp.tasks if c.change < 0], "bold red"),
        ("pass rate rose", [c for c in cmp.tasks if c.change > 0], "bold green"),
    ):
        if not items:
            continue
        console.print(Text(f"{title}: {len(items)} task(s) of {cmp.paired}", style=style))
        for c in items[:_SHOWN]:
            console.print(plain(f"  {task_line(c)}", style=style.removeprefix("bold ")))
        if len(items) > _SHOWN:
            console.print(Text(f"  ... and {len(items) - _SHOWN} more", style="dim"))


def _suite_table(cmp: Comparison) -> Table:
    """The suite-level figures with their thresholds and tests."""
    table = Table(header_style="bold")
    for col, justify in (
        ("metric", "left"),
        ("base", "right"),
        ("candidate", "right"),
        ("change", "right"),
        ("allowed", "right"),
        ("exceeded", "left"),
        ("p", "right"),
        ("test", "left"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for d in cmp.suite:
        unit = "%" if "latency" in d.metric else ""
        allowed = f"+{d.allowed:g}%" if "latency" in d.metric else f"-{d.allowed:g}"
        table.add_row(
            plain(d.metric),
            _num(d.base),
            _num(d.candidate),
            "—" if d.change is None else f"{d.change:+.1f}{unit}",
            allowed,
            Text("yes", style="red") if d.exceeded else Text("no"),
            _p(d.p_value),
            plain(d.test),
        )
    return table


def _calibrated(console: Console, cmp: Comparison) -> None:
    if cmp.calibrated:
        calibrated = Table(title="judge checks against people's labels", title_justify="left")
        for col in CHANGE_COLUMNS:
            calibrated.add_column(col, justify="left" if col == "judge check" else "right")
        for row in calibrated_change_rows(cmp.calibrated):
            calibrated.add_row(plain(row[0]), *(Text(cell) for cell in row[1:]))
        console.print(calibrated)


def _unpaired_checks(console: Console, cmp: Comparison) -> None:
    """Every check's pass rate in both windows, with Fisher's exact test (no flips: no trace
    is in both windows)."""
    if not cmp.checks:
        return
    checks = Table(title="checks in both windows (Fisher's exact test)", title_justify="left")
    for col in ("check", "base", "candidate", "change", "p"):
        checks.add_column(col, justify="left" if col == "check" else "right")
    for cd in cmp.checks:
        checks.add_row(
            plain(cd.check),
            _num(None if cd.base_rate is None else cd.base_rate * 100) + "%",
            _num(None if cd.candidate_rate is None else cd.candidate_rate * 100) + "%",
            "—" if cd.change is None else f"{cd.change * 100:+.1f}",
            Text(_p(cd.p_value), style="red" if cd.p_value < cmp.alpha else ""),
        )
    console.print(checks)
