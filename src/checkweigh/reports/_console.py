"""The console report: TCR with its interval and band, outcomes, checks, gates, slow cases."""

from __future__ import annotations

import math

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..core import CaseGates, JudgeStats, OutcomeClass, RubricSummary, RunSummary
from ._calibration import calibration_lines, calibration_table, gate_text
from ._safe import clean, plain

_OUTCOME_STYLE = {
    OutcomeClass.SUCCESSFUL_COMPLETION.value: "green",
    OutcomeClass.GRACEFUL_FAILURE.value: "yellow",
    OutcomeClass.PARTIAL_FAILURE.value: "dark_orange",
    OutcomeClass.HARD_FAILURE.value: "red",
}
_BAND_STYLE = {"production ready": "green", "needs improvement": "yellow", "not ready": "red"}


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def truncated_tcr(tcr: float) -> str:
    """A TCR to three decimals, truncated (0.8496 is not 0.850 next to a 0.85 band edge) once
    float noise is gone (5.6 / 7 summed as 0.79999... is 0.800, as the mean case score says)."""
    return f"{math.floor(round(tcr, 9) * 1000) / 1000:.3f}"


def score_informational(summary: RunSummary) -> bool:
    """Whether the run's case pass/fail ignored the score (``pass_policy: all_checks``): its
    weights, scores and outcome classes are then shown as informational."""
    g = summary.case_gates
    return g is not None and g.pass_policy == "all_checks"


def _rubric_panel(r: RubricSummary, informational: bool = False) -> Panel:
    parts: list[Table | Text] = []
    if r.tcr is None:
        head = Text(f"no scored executions ({r.errored} errored, {r.not_applicable} n/a)")
    else:
        band = r.band or ""
        head = Text.assemble(
            ("TCR ", "bold"),
            # truncated, not rounded: 0.8496 must not read as 0.850 next to a 0.85 band edge
            (truncated_tcr(r.tcr), "bold"),
            f"  95% CI [{r.tcr_low:.3f}, {r.tcr_high:.3f}]  ",
            (clean(band), _BAND_STYLE.get(band, "")),
            f"   scored {r.scored} of {r.executions}",
            f", errored {r.errored}" if r.errored else "",
            f", not applicable {r.not_applicable}" if r.not_applicable else "",
        )
    parts.append(head)
    if r.calibrated_tcr is not None:
        parts.append(
            Text(
                f"calibrated TCR {truncated_tcr(r.calibrated_tcr)} (its judge checks' pass rates "
                "corrected by people's labels; no interval: their errors do not add)",
                style="italic",
            )
        )
    elif r.calibrated_tcr_note:
        parts.append(Text(f"note: {r.calibrated_tcr_note}", style="italic"))
    if r.normalization_note:
        parts.append(plain(f"note: {r.normalization_note}", style="italic"))

    outcomes = Table(box=None, show_header=False, pad_edge=False)
    for name, count in r.outcomes.items():
        share = count / r.scored if r.scored else 0.0
        outcomes.add_row(
            plain(name.replace("_", " "), style=_OUTCOME_STYLE.get(name, "")),
            f"{count:>6}",
            f"{100 * share:5.1f}%",
        )
    parts.append(outcomes)
    if r.outcome_note:
        parts.append(plain(f"outcomes: {r.outcome_note}", style="italic"))

    checks = Table(title="checks", title_justify="left", header_style="bold")
    for col, justify in (
        ("check", "left"),
        ("score weight" if informational else "weight", "right"),
        ("pass rate", "right"),
        ("95% CI", "right"),
        ("passed", "right"),
        ("failed", "right"),
        ("n/a", "right"),
        ("errored", "right"),
    ):
        checks.add_column(col, justify=justify, no_wrap=col == "check")  # type: ignore[arg-type]
    for c in r.checks:
        checks.add_row(
            plain(c.check),
            f"{c.weight:.3f}",
            _pct(c.pass_rate),
            f"{100 * c.ci_low:.0f}-{100 * c.ci_high:.0f}%",
            str(c.passed),
            Text(str(c.failed), style="red" if c.failed else ""),
            str(c.not_applicable),
            Text(str(c.errored), style="magenta" if c.errored else ""),
        )
    parts.append(checks)
    if r.top_failing:
        parts.append(plain("top failing: " + ", ".join(r.top_failing), style="red"))
    for e in r.errored_examples[:3]:
        parts.append(plain(f"  errored {e}", style="magenta"))
    if r.worst and informational:
        parts.append(plain("lowest scores (informational: no case passes or fails by score)"))
    for w in r.worst[:3]:
        parts.append(plain(f"  {w.case_id}#{w.repeat}: {w.explanation}", style="dim"))
    if r.case_variance and r.case_variance[0].stdev > 0:
        var = Table(title="least stable cases across repeats", title_justify="left")
        for col in ("case", "runs", "mean", "stdev", "min", "max", "outcomes"):
            var.add_column(col)
        for v in r.case_variance[:5]:
            var.add_row(
                plain(v.case_id),
                str(v.runs),
                f"{v.mean:.3f}",
                f"{v.stdev:.3f}",
                f"{v.min:.2f}",
                f"{v.max:.2f}",
                ", ".join(f"{k}x{n}" for k, n in v.outcomes.items()),
            )
        parts.append(var)
    return Panel(Group(*parts), title=plain(r.rubric, style="bold"), title_align="left")


def judge_line(stats: JudgeStats) -> str:
    """One line on what the judge did."""
    parts = [
        f"judge {stats.judge}: {stats.calls} call(s), {stats.cache_hits} cache hit(s)",
        f"{stats.errors} error(s)",
    ]
    if stats.replay_misses:
        parts.append(f"{stats.replay_misses} replay miss(es)")
    if stats.batch_calls:
        parts.append(f"{stats.batch_calls} of them by batch (half price)")
    if stats.calls:
        parts.append(f"{stats.input_tokens:,} tokens in / {stats.output_tokens:,} out")
    if stats.mean_latency_ms is not None:
        parts.append(f"mean {stats.mean_latency_ms:,.0f} ms/call")
    if stats.calls and stats.peak_in_flight is not None and stats.concurrency is not None:
        parts.append(f"peak {stats.peak_in_flight} in flight of {stats.concurrency} allowed")
    if (pacing := stats.pacing_line()) is not None:
        parts.append(pacing)
    if stats.cost_usd is not None:
        parts.append(f"${stats.cost_usd:.4f}")
    if stats.budget_usd is not None:
        parts.append(f"budget ${stats.budget_usd:g} stopped {stats.budget_stopped} call(s)")
    return ", ".join(parts)


def judge_checks_table(stats: JudgeStats) -> Table | None:
    """The judge's calls, tokens and cost by check, or None with fewer than two checks."""
    if len(stats.per_check) < 2 and not stats.budget_stopped:
        return None
    table = Table(title="judge by check", title_justify="left")
    columns = (
        "check",
        "calls",
        "cache hits",
        "errors",
        "tokens in",
        "prompt-cached in",
        "tokens out",
        "cost",
    )
    for name in (*columns, "budget stops"):
        table.add_column(name, justify="left" if name == "check" else "right")
    for check, s in stats.per_check.items():
        cost = "" if s.cost_usd is None else f"${s.cost_usd:.4f}"
        table.add_row(
            plain(check),
            f"{s.calls} ({s.batch_calls} by batch)" if s.batch_calls else str(s.calls),
            str(s.cache_hits),
            str(s.errors),
            f"{s.input_tokens:,}",
            f"{s.cached_input_tokens:,}",
            f"{s.output_tokens:,}",
            cost,
            str(s.budget_stopped),
        )
    return table


def agent_line(summary: RunSummary) -> str | None:
    """``agent: 1,234 input + 456 output tokens, $0.0123 over 50 cases; mean latency 812 ms``,
    or None when the run knows neither usage nor latency."""
    if summary.usage is None:
        return None
    unit = "cases" if summary.executions == summary.cases else "executions"
    text = summary.usage.one_line(unit)
    return f"agent: {text}" if text else None


def reliability_line(summary: RunSummary) -> str | None:
    """``reliability over 3 tries: pass@1 0.80, pass@3 0.95; pass^3 0.62; flaky tasks 12 of
    40 (30%): the agent's trace varied on 9, the same trace was judged differently on 4``, or
    None for a run without repeats."""
    found = summary.reliability
    if found is None:
        return None
    ks = sorted({1, found.max_tries} | ({2} if found.max_tries > 2 else set()))
    rows = [row for k in ks if (row := found.at(k)) is not None]
    at = ", ".join(f"pass@{r.k} {r.pass_at_k:.2f}" for r in rows)
    hat = ", ".join(f"pass^{r.k} {r.pass_hat_k:.2f}" for r in rows)
    line = (
        f"reliability over up to {found.max_tries} tries of {found.tasks} task(s): {at}; {hat}; "
        f"flaky tasks {found.flaky_tasks} ({found.flaky_rate:.0%} of the repeated)"
    )
    if found.flaky_tasks:
        line += (
            f": the agent's trace varied on {found.agent_variation}, "
            f"the same trace was judged differently on {found.judge_variation}"
        )
    return line


def render_summary(
    console: Console,
    summary: RunSummary,
    *,
    title: str,
    run_id: str | None = None,
    status: str | None = None,
) -> None:
    """Print the whole report for a run."""
    header = Text.assemble((clean(title), "bold"))
    if run_id:
        header.append(f"   run {run_id}")
    if status and status != "complete":
        header.append(f"   [{status}]", style="bold red")
    console.print(header)
    console.print(
        f"{summary.executions} execution(s) of {summary.cases} case(s); "
        f"{summary.errored_executions} errored"
        + (f" ({summary.agent_errors} agent error(s))" if summary.agent_errors else "")
    )
    if summary.case_gates is not None:
        console.print(plain(headline(summary.case_gates)))
    for note in summary.notes:
        if not any(note == r.normalization_note for r in summary.rubrics):
            console.print(plain(f"note: {note}", style="italic"))
    for r in summary.rubrics:
        console.print(_rubric_panel(r, score_informational(summary)))
    if summary.slowest:
        slow = Table(title="slowest cases", title_justify="left")
        slow.add_column("case")
        slow.add_column("latency", justify="right")
        for s in summary.slowest:
            slow.add_row(plain(f"{s.case_id}#{s.repeat}"), f"{s.latency_ms:,.0f} ms")
        console.print(slow)
    if (agent := agent_line(summary)) is not None:
        console.print(agent)
    if (reliable := reliability_line(summary)) is not None:
        console.print(reliable)
    if summary.judge is not None:
        console.print(plain(judge_line(summary.judge)))  # the judge's name is user text
        if (cached := summary.judge.prompt_cache_line()) is not None:
            console.print(plain(cached))
        if (by_check := judge_checks_table(summary.judge)) is not None:
            console.print(by_check)
    if (calibrated := calibration_table(summary)) is not None:
        console.print(calibrated)
        for line in calibration_lines(summary):
            console.print(line)
    decided = summary.gates_not_decided is None
    if summary.case_gates is not None:
        _case_gates(console, summary.case_gates, decided and summary.case_gates_undecided is None)
    for g in summary.gates:
        console.print(
            Text.assemble(
                "gate ",
                _mark(g.passed, decided and g.decided),
                clean(f"  {g.gate}  (actual {gate_text(g)})"),
            )
        )
        if decided and not g.decided and g.needs:
            console.print(plain(f"     not decided: {g.needs}", style="yellow"))
    if summary.gates_not_decided is not None:
        console.print(
            Text.assemble(("gates not decided", "bold yellow"), f": {summary.gates_not_decided}")
        )
    elif summary.gates_passed is None and summary.to_decide():
        console.print(
            Text.assemble(
                ("gates not decided", "bold yellow"),
                clean(" (exit 4): " + "; ".join(summary.to_decide())),
            )
        )
    elif summary.gates or summary.case_gates is not None:
        verdict = "passed" if summary.gates_passed else "FAILED"
        console.print(
            Text(f"gates {verdict}", style="bold green" if summary.gates_passed else "bold red")
        )


def headline(g: CaseGates) -> str:
    """The run's mean score and its case pass rate side by side, each named so that neither is
    read for the other: ``TCR (mean case score) 83.4% (95% CI 79.0-87.8) · cases passed 41 of
    50 (82.0%)``."""
    if g.weighted_metrics_score_pct is None:
        tcr = "TCR (mean case score) unmeasured"
    else:
        tcr = f"TCR (mean case score) {g.weighted_metrics_score_pct:.1f}%"
        low, high = g.weighted_metrics_score_low_pct, g.weighted_metrics_score_high_pct
        if low is not None and high is not None:
            tcr += f" (95% CI {low:.1f}-{high:.1f})"
    return f"{tcr} · cases passed {g.passed} of {g.executions} ({g.cases_pass_rate_pct:.1f}%)"


def case_pass_rule(g: CaseGates) -> str:
    """When a case passes, as the run decided it (runs stored before it was recorded: the
    threshold policy's rule, which was the only one)."""
    if g.case_pass_rule is not None:
        return g.case_pass_rule
    return f"every expected outcome that applies passes (else score >= {g.pass_threshold:g})"


def _mark(passed: bool, decided: bool = True) -> Text:
    if not decided:  # measured on the finished part of an incomplete run: it decides nothing
        return Text("----", style="bold yellow")
    return Text("PASS", style="bold green") if passed else Text("FAIL", style="bold red")


def _case_gates(console: Console, g: CaseGates, decided: bool = True) -> None:
    console.print(
        Text.assemble(
            ("cases ", "bold"),
            f"{g.passed} passed, {g.failed} failed, {g.errored} errored of {g.executions}",
            f"   (case pass: {case_pass_rule(g)})",
        )
    )
    for f in g.failing[:10]:
        score = ""
        if f.score_pct is not None and not f.reason.startswith("score"):
            label = ", informational" if g.pass_policy == "all_checks" else ""
            score = f" (score {f.score_pct:.1f}{label})"
        style = "magenta" if f.state == "errored" else "red"
        console.print(plain(f"  {f.state} {f.case_id}#{f.repeat}: {f.reason}{score}", style=style))
    hidden = g.failed + g.errored - min(len(g.failing), 10)
    if hidden > 0:
        console.print(Text(f"  ... and {hidden} more", style="dim"))
    metrics = (
        "unmeasured"
        if g.weighted_metrics_score_pct is None
        else f"{g.weighted_metrics_score_pct:.1f}%"
    )
    console.print(
        Text.assemble(
            "gate ",
            _mark(g.metrics_passed, decided),
            f"  metrics: mean case score {metrics} >= {g.metrics_pass_threshold:g}%",
        )
    )
    console.print(
        Text.assemble(
            "gate ",
            _mark(g.cases_passed, decided),
            f"  cases: pass rate {g.cases_pass_rate_pct:.1f}% >= {g.cases_pass_threshold:g}%",
        )
    )
