"""The comparison as a pull-request comment: what regressed first (the thresholds exceeded, then
the cases that flipped, worst first), then the score changes and the per-check changes with
their p-values and whether they are significant.

Case ids, check names and reasons are user and agent text: they go through :func:`escape_md`,
so they never become markup, HTML or a link. The only links are the ones this module builds:
with a server URL, each case links to its page ``URL/runs/{run_id}/cases/{case_id}``, the ids
percent-encoded and the link text escaped like any other cell.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from ..core import CaseChange, CheckDelta, CompareVerdict, Comparison, SuiteDelta
from ..errors import InputError
from ._calibration import CHANGE_COLUMNS, calibrated_change_rows
from ._compare import TASK_RULE, explain_comparison, task_line, unpaired_line
from ._markdown import escape_md
from ._rejudge import split_markdown

_SHOWN = 20
_TITLE = {
    CompareVerdict.REGRESSION: "❌ regression",
    CompareVerdict.NOT_SIGNIFICANT: "⚠️ not significant",
    CompareVerdict.NO_REGRESSION: "✅ no regression",
}
# what a server URL may hold: printable ASCII without space, quotes, angle brackets,
# parentheses, backslash or backtick (anything that could end a Markdown link destination)
_URL_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&*+,;=%]+")
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def server_url(text: str) -> str:
    """``text`` checked as the base URL of a checkweigh server, without its trailing ``/``.

    Raises:
        InputError: not an http(s) URL with a host, or one carrying credentials, a query, a
            fragment or characters a Markdown link cannot hold.
    """
    expected = "expected an http:// or https:// URL such as https://checkweigh.example.com"
    if not _URL_CHARS.fullmatch(text):
        raise InputError(f"{expected}, got {text!r}", field="--server-url")
    try:
        parts = urlsplit(text)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        raise InputError(f"{expected}, got {text!r}", field="--server-url") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise InputError(f"{expected}, got {text!r}", field="--server-url")
    if parts.username is not None or parts.password is not None:
        # the comment is public: a password in it would be published
        raise InputError(
            "the URL carries a user name or password; give the server's address only",
            field="--server-url",
        )
    if parts.query or parts.fragment or "#" in text or "?" in text:
        raise InputError(
            f"{expected} without a query or fragment, got {text!r}", field="--server-url"
        )
    return text.rstrip("/")


def case_url(server: str, run_id: str, case_id: str) -> str:
    """The page of ``case_id`` in run ``run_id`` on ``server``."""
    run = quote(run_id, safe="", errors="surrogatepass")
    case = quote(case_id, safe="", errors="surrogatepass")
    return f"{server}/runs/{run}/cases/{case}"


def _code(run_id: str) -> str:
    return f"`{run_id}`" if _PLAIN_ID.fullmatch(run_id) else escape_md(run_id)


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}"


def _p(p: float | None) -> str:
    if p is None:
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _reading(p: float | None, alpha: float) -> str:
    if p is None:
        return "no test"
    return "significant" if p < alpha else "not significant"


def _allowed(d: SuiteDelta) -> str:
    return f"+{d.allowed:g}%" if "latency" in d.metric else f"-{d.allowed:g}"


def _change(d: SuiteDelta) -> str:
    if d.change is None:
        return "—"
    return f"{d.change:+.1f}{'%' if 'latency' in d.metric else ''}"


def _drop(c: CaseChange) -> float:
    """How much the case lost (an errored candidate has no score: it lost everything)."""
    return (c.base_score or 0.0) - (c.candidate_score or 0.0)


def _worst_first(items: list[CaseChange]) -> list[CaseChange]:
    return sorted(items, key=lambda c: (-_drop(c), c.case_id, c.repeat))


class _Cases:
    """Case rows, linked to their pages when a server URL is given."""

    def __init__(self, base: str, candidate: str, server: str | None, link_base: bool) -> None:
        self.base = base
        self.candidate = candidate
        self.server = server
        self.link_base = link_base

    def table(self, title: str, items: list[CaseChange]) -> list[str]:
        if not items:
            return []
        lines = [f"**{title}** ({len(items)})", "", "| case | base | candidate | why |"]
        lines.append("| --- | --- | --- | --- |")
        for c in items[:_SHOWN]:
            case = escape_md(c.case_id)
            before = f"{c.base_state} {_num(c.base_score)}"
            if self.server is not None:
                case = f"[{case}]({case_url(self.server, self.candidate, c.case_id)})"
                if self.link_base:
                    before = f"[{before}]({case_url(self.server, self.base, c.case_id)})"
            lines.append(
                f"| {case} #{c.repeat} | {before} | {c.candidate_state} "
                f"{_num(c.candidate_score)} | {escape_md(c.reason)} |"
            )
        if len(items) > _SHOWN:
            lines.append(f"| … and {len(items) - _SHOWN} more | | | |")
        return [*lines, ""]


def _suite_table(rows: list[SuiteDelta], alpha: float, *, exceeded: bool) -> list[str]:
    lines = [
        "| metric | base | candidate | change | allowed | "
        + ("" if exceeded else "exceeded | ")
        + "p | reading | test |",
        "| --- | ---: | ---: | ---: | ---: | "
        + ("" if exceeded else "--- | ")
        + "---: | --- | --- |",
    ]
    for d in rows:
        flag = "" if exceeded else f"{'yes' if d.exceeded else 'no'} | "
        lines.append(
            f"| {escape_md(d.metric)} | {_num(d.base)} | {_num(d.candidate)} | {_change(d)} "
            f"| {_allowed(d)} | {flag}{_p(d.p_value)} | {_reading(d.p_value, alpha)} "
            f"| {escape_md(d.test)} |"
        )
    return [*lines, ""]


def _check_table(checks: list[CheckDelta], alpha: float) -> list[str]:
    moved = [d for d in checks if d.change or d.worse or d.better]
    if not moved:
        return ["No check's pass rate changed.", ""]
    return _rates_table(moved, alpha, flips=True)


def _window_check_table(checks: list[CheckDelta], alpha: float) -> list[str]:
    """Every check's pass rate in two monitor windows, with Fisher's exact test (no flips: no
    trace is in both windows)."""
    if not checks:
        return ["No check decided in either window.", ""]
    return _rates_table(checks, alpha, flips=False)


def _rates_table(checks: list[CheckDelta], alpha: float, *, flips: bool) -> list[str]:
    """Each check's pass rate in both runs, its change and test; with ``flips``, the paired
    executions that went pass → fail and fail → pass."""
    flip_heads = " pass → fail | fail → pass |" if flips else ""
    lines = [
        f"| check | base | candidate | change |{flip_heads} p | reading |",
        "| --- | ---: | ---: | ---: |" + (" ---: | ---: |" if flips else "") + " ---: | --- |",
    ]
    for d in checks[:_SHOWN]:
        base = "—" if d.base_rate is None else f"{d.base_rate * 100:.1f}%"
        cand = "—" if d.candidate_rate is None else f"{d.candidate_rate * 100:.1f}%"
        change = "—" if d.change is None else f"{d.change * 100:+.1f}"
        flipped = f" {d.worse} | {d.better} |" if flips else ""
        lines.append(
            f"| {escape_md(d.check)} | {base} | {cand} | {change} |{flipped} {_p(d.p_value)} "
            f"| {_reading(d.p_value, alpha)} |"
        )
    if len(checks) > _SHOWN:
        lines.append(f"| … and {len(checks) - _SHOWN} more |" + " |" * (7 if flips else 5))
    return [*lines, ""]


def comparison_markdown(
    cmp: Comparison,
    base: str,
    candidate: str,
    *,
    server: str | None = None,
    link_base: bool = True,
) -> str:
    """The comparison as Markdown for a pull-request comment.

    Args:
        cmp: the comparison.
        base: the base run's id.
        candidate: the candidate run's id.
        server: a checked :func:`server_url`: each case then links to its page.
        link_base: link the base run's case pages too (False when the base was read from an
            export, which no server shows).
    """
    cases = _Cases(base, candidate, server, link_base)
    flipped = _worst_first([c for c in cmp.regressions if c.flipped])
    dropped = _worst_first([c for c in cmp.regressions if not c.flipped])
    lines = [
        f"## checkweigh compare: {_TITLE[cmp.verdict]}",
        "",
        f"{_code(base)} → {_code(candidate)}: "
        + (unpaired_line(cmp) if cmp.unpaired else f"{cmp.paired} paired execution(s)")
        + f". {escape_md(explain_comparison(cmp))}.",
        "",
    ]
    extra = []
    if cmp.only_base:
        extra.append(f"{cmp.only_base} only in the base")
    if cmp.only_candidate:
        extra.append(f"{cmp.only_candidate} only in the candidate")
    if extra and not cmp.unpaired:  # an unpaired comparison's counts are its two windows
        lines += [f"Not compared: {', '.join(extra)}.", ""]
    if cmp.rejudge is not None:
        lines += split_markdown(cmp.rejudge)
    if cmp.judged_differently:
        lines += [
            "> **Warning: the runs were judged differently**; a change may be the judge's, "
            "not the agent's:",
            *(f"> - {escape_md(d)}" for d in cmp.judged_differently),
            "",
        ]
    for note in cmp.gates_not_decided:
        lines += [f"> Gates not decided in the {escape_md(note)}.", ""]
    if cmp.calibrated:
        lines += [
            "| " + " | ".join(CHANGE_COLUMNS) + " |",
            "| --- | ---: | ---: | ---: | ---: |",
            *(
                "| " + " | ".join(escape_md(cell) for cell in row) + " |"
                for row in calibrated_change_rows(cmp.calibrated)
            ),
            "",
        ]
    lines += ["### Regressions", ""]
    exceeded = [d for d in cmp.suite if d.exceeded]
    if exceeded:
        lines += ["**Thresholds exceeded**", ""]
        lines += _suite_table(exceeded, cmp.alpha, exceeded=True)
    lines += cases.table("Cases that flipped from pass to fail, worst first", flipped)
    lines += cases.table("Cases whose score dropped, worst first", dropped)
    if not (exceeded or flipped or dropped):
        lines += [
            "None: no threshold exceeded."
            if cmp.unpaired
            else "None: no threshold exceeded, no case flipped or lost score.",
            "",
        ]
    lines += ["### Score changes", ""]
    lines += _suite_table(cmp.suite, cmp.alpha, exceeded=False)
    lines += cases.table("Improvements", cmp.improvements)
    if cmp.per_task:
        lines += _tasks(cmp)
    elif not cmp.unpaired:
        lines += [f"Unchanged: {cmp.unchanged} execution(s).", ""]
    if cmp.reliability:
        lines += [
            "### Reliability over the paired tries",
            "",
            "| k | pass@k base | pass@k candidate | pass^k base | pass^k candidate | tasks |",
            "|---:|---:|---:|---:|---:|---:|",
            *(
                f"| {r.k} | {r.base_pass_at_k:.2f} | {r.candidate_pass_at_k:.2f} "
                f"| {r.base_pass_hat_k:.2f} | {r.candidate_pass_hat_k:.2f} | {r.tasks} |"
                for r in cmp.reliability
            ),
            "",
        ]
    if cmp.unpaired:
        lines += ["### Checks in both windows (Fisher's exact test)", ""]
        lines += _window_check_table(cmp.checks, cmp.alpha)
    else:
        lines += ["### Checks whose pass rate changed", ""]
        lines += _check_table(cmp.checks, cmp.alpha)
    return "\n".join(lines).rstrip() + "\n"


def _tasks(cmp: Comparison) -> list[str]:
    """The per-task listing of a comparison with repeats."""
    lines = ["### Tasks (runs with repeats)", "", f"{escape_md(TASK_RULE)}.", ""]
    for title, items in (
        ("Pass rate dropped", [c for c in cmp.tasks if c.change < 0]),
        ("Pass rate rose", [c for c in cmp.tasks if c.change > 0]),
    ):
        if items:
            lines += [f"**{title}: {len(items)} task(s) of {cmp.paired}**", ""]
            lines += [f"- {escape_md(task_line(c))}" for c in items[:_SHOWN]]
            if len(items) > _SHOWN:
                lines.append(f"- … and {len(items) - _SHOWN} more")
            lines.append("")
    lines += [f"Unchanged: {cmp.unchanged} task(s) with the same pass rate.", ""]
    return lines
