"""A Markdown summary of a run, fit for a pull-request comment or a CI job summary.

Case ids, reasons and check names are user and agent text: they are escaped so that they can
neither break a table nor inject HTML, control characters or links into the page that renders
them. Bare URLs, ``www.`` names, e-mail addresses, @mentions and #123 issue references are
broken with character references (and a zero-width space after ``@`` and ``#``), so GitHub's
autolinker (which matches the source text for ``scheme://`` and ``www.`` and the merged text
for e-mails) and linkify-it (which matches each text run between references) find nothing to
link; the page still reads the same.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..core import CaseGates, JudgeStats, RunSummary
from ._calibration import CALIBRATION_COLUMNS, CALIBRATION_NOTE, calibration_rows, gate_text
from ._console import agent_line, case_pass_rule, headline, reliability_line, truncated_tcr
from ._files import replaced_at
from ._safe import clean

# Markdown punctuation, and "$" (GitHub renders $...$ as math)
_SPECIAL = re.compile(r"([\\`*_\[\]|~$])")
# what an autolinker would take for the start of a link, and its neutral spelling:
# "scheme:" before a non-space (https://, mailto:, javascript:), "//" (protocol-relative),
# a dot before a letter (www.x, example.com, a TLD) or after "www", "@" (e-mails, @mentions)
# and "#" before a digit (GitHub links #123 to an issue, and cross-references it)
_LINKISH = re.compile(r"(?<=[A-Za-z]):(?=\S)|//|\.(?=[^\W\d_])|(?<=(?i:www))\.|@|#(?=\d)")
_NEUTRAL = {":": "&#58;", "//": "/&#47;", ".": "&#46;", "@": "@&#8203;", "#": "#&#8203;"}
_FAILING_SHOWN = 10


def escape_md(text: str, limit: int = 300) -> str:
    """``text`` as literal inline Markdown: one line, no HTML, no markup, no link, no control
    character (shown escaped, as on the console), at most ``limit`` characters."""
    one_line = " ".join(text.split())
    if len(one_line) > limit:
        one_line = one_line[: limit - 1] + "…"
    visible = clean(one_line)
    html_safe = visible.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    literal = _SPECIAL.sub(r"\\\1", html_safe)
    return _LINKISH.sub(lambda m: _NEUTRAL[m.group()], literal)


def _mark(ok: bool, decided: bool = True) -> str:
    if not decided:
        return "⚠️ not decided"
    return "✅ pass" if ok else "❌ fail"


def _dimensions(g: CaseGates, decided: bool) -> list[str]:
    metrics = g.weighted_metrics_score_pct
    return [
        f"| metrics: mean case score | {'—' if metrics is None else f'{metrics:.1f}%'} "
        f"| ≥ {g.metrics_pass_threshold:g}% | {_mark(g.metrics_passed, decided)} |",
        f"| cases: pass rate ({g.passed} of {g.executions}) | {g.cases_pass_rate_pct:.1f}% "
        f"| ≥ {g.cases_pass_threshold:g}% | {_mark(g.cases_passed, decided)} |",
    ]


def render_markdown(suite: str, run_id: str, status: str, summary: RunSummary) -> str:
    """The summary as Markdown text."""
    ok, decided = summary.gates_passed, summary.gates_not_decided is None
    verdict = "⚠️ gates not decided" if ok is None else "✅ passed" if ok else "❌ failed"
    lines = [
        f"## checkweigh: {escape_md(suite)} {verdict}",
        "",
        f"Run `{run_id}` ({status}): {summary.executions} execution(s) of {summary.cases} "
        f"case(s), {summary.errored_executions} errored.",
        "",
    ]
    if summary.gates_not_decided is not None:
        lines += [f"**Gates not decided**: {escape_md(summary.gates_not_decided)}.", ""]
    elif ok is None and summary.to_decide():
        waiting = "; ".join(summary.to_decide())
        lines += [f"**Gates not decided** (exit 4): {escape_md(waiting, limit=1200)}.", ""]
    if summary.case_gates is not None:
        lines += [
            f"**{escape_md(headline(summary.case_gates))}**; "
            f"case pass: {escape_md(case_pass_rule(summary.case_gates))}.",
            "",
        ]
    if summary.case_gates is not None or summary.gates:
        lines += ["| gate | actual | threshold | result |", "| --- | ---: | ---: | --- |"]
        if summary.case_gates is not None:
            lines += _dimensions(summary.case_gates, decided and not summary.case_gates_undecided)
        for gate in summary.gates:
            mark = _mark(gate.passed, decided and gate.decided)
            lines.append(f"| {escape_md(gate.gate)} | {gate_text(gate)} | | {mark} |")
        lines.append("")
    if summary.calibration:
        lines += [
            "| " + " | ".join(CALIBRATION_COLUMNS) + " |",
            "| --- | " + " | ".join("---:" for _ in CALIBRATION_COLUMNS[1:-1]) + " | --- |",
        ]
        for c in summary.calibration:
            lines.append("| " + " | ".join(escape_md(cell) for cell in calibration_rows(c)) + " |")
        lines += ["", f"_{escape_md(CALIBRATION_NOTE, limit=600)}._", ""]
    lines += [
        "| rubric | TCR (mean score) | 95% CI | band | scored | errored | top failing checks |",
        "| --- | ---: | ---: | --- | ---: | ---: | --- |",
    ]
    for r in summary.rubrics:
        tcr = "—" if r.tcr is None else truncated_tcr(r.tcr)
        ci = "—" if r.tcr_low is None else f"{r.tcr_low:.3f} to {r.tcr_high:.3f}"
        failing = ", ".join(escape_md(c) for c in r.top_failing[:3]) or "—"
        lines.append(
            f"| {escape_md(r.rubric)} | {tcr} | {ci} | {escape_md(r.band or '—')} "
            f"| {r.scored} | {r.errored} | {failing} |"
        )
    lines.append("")
    for r in summary.rubrics:
        if r.calibrated_tcr is not None:
            lines += [
                f"- {escape_md(r.rubric)}: calibrated TCR {truncated_tcr(r.calibrated_tcr)} "
                "(its judge checks' pass rates corrected by people's labels)",
                "",
            ]
        elif r.calibrated_tcr_note:
            lines += [f"- {escape_md(r.rubric)}: {escape_md(r.calibrated_tcr_note)}", ""]
    if (agent := agent_line(summary)) is not None:
        lines += [agent[0].upper() + agent[1:] + ".", ""]
    if (reliable := reliability_line(summary)) is not None:
        lines += [reliable[0].upper() + reliable[1:] + ".", ""]
    for r in summary.rubrics:
        if r.scored:
            counts = ", ".join(
                f"{n} {name.replace('_', ' ')}" for name, n in r.outcomes.items() if n
            )
            note = f" ({escape_md(r.outcome_note, limit=600)})" if r.outcome_note else ""
            lines.append(f"- {escape_md(r.rubric)} outcomes: {counts}{note}")
    if any(r.scored for r in summary.rubrics):
        lines.append("")
    g = summary.case_gates
    if g is not None and g.failing:
        lines += [
            f"<details><summary>{g.failed} failed, {g.errored} errored case(s)</summary>",
            "",
            "| case | state | "
            + ("score (informational)" if g.pass_policy == "all_checks" else "score")
            + " | why |",
            "| --- | --- | ---: | --- |",
        ]
        for f in g.failing[:_FAILING_SHOWN]:
            score = "—" if f.score_pct is None else f"{f.score_pct:.1f}"
            lines.append(
                f"| {escape_md(f.case_id)} #{f.repeat} | {f.state} | {score} "
                f"| {escape_md(f.reason)} |"
            )
        hidden = g.failed + g.errored - min(len(g.failing), _FAILING_SHOWN)
        if hidden > 0:
            lines.append(f"| … and {hidden} more | | | |")
        lines += ["", "</details>", ""]
    for note in summary.notes:
        lines.append(f"> note: {escape_md(note)}")
    if summary.judge is not None:
        j = summary.judge
        cost = "" if j.cost_usd is None else f", ${j.cost_usd:.4f}"
        budget = (
            ""
            if j.budget_usd is None
            else f" The budget of ${j.budget_usd:g} stopped {j.budget_stopped} call(s)."
        )
        batch = f" ({j.batch_calls} by batch, at half price)" if j.batch_calls else ""
        lines.append(
            f"\nJudge {escape_md(j.judge)}: {j.calls} call(s){batch}, {j.cache_hits} cache hit(s), "
            f"{j.errors} error(s), {j.input_tokens:,} tokens in / {j.output_tokens:,} out"
            f"{cost}.{budget}"
        )
        if (pacing := j.pacing_line()) is not None:
            lines.append(f"\nConcurrency: {escape_md(pacing)}.")
        if (cached := j.prompt_cache_line()) is not None:
            lines.append(f"\n{escape_md(cached[0].upper() + cached[1:])}.")
        lines += _judge_by_check(j)
    return "\n".join(lines).rstrip() + "\n"


def _judge_by_check(j: JudgeStats) -> list[str]:
    """The judge's calls, tokens and cost by check, as a table (none with a single check)."""
    if len(j.per_check) < 2 and not j.budget_stopped:
        return []
    lines = [
        "",
        "| check | calls | cache hits | errors | tokens in | prompt-cached in | tokens out | cost "
        "| budget stops |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for check, s in j.per_check.items():
        cost = "" if s.cost_usd is None else f"${s.cost_usd:.4f}"
        calls = f"{s.calls} ({s.batch_calls} by batch)" if s.batch_calls else str(s.calls)
        lines.append(
            f"| {escape_md(check)} | {calls} | {s.cache_hits} | {s.errors} | "
            f"{s.input_tokens:,} | {s.cached_input_tokens:,} | "
            f"{s.output_tokens:,} | {cost} | {s.budget_stopped} |"
        )
    return lines


def write_markdown(
    path: Path, *, suite: str, run_id: str, status: str, summary: RunSummary
) -> None:
    """Write :func:`render_markdown` to ``path``."""
    with replaced_at(path) as part:
        part.write_text(render_markdown(suite, run_id, status, summary), encoding="utf-8")
