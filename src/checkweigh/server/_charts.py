"""Charts as inline SVG, drawn on the server from numbers: pure functions, no chart library.

Every piece of text that reaches a chart (a check's name, an outcome) goes through
:func:`markupsafe.escape`; numbers are formatted here. Each function returns one ``<svg>``
element as :class:`~markupsafe.Markup`, ready for a template. Colours are presentation
attributes (``fill``, ``stroke``), which a ``style-src 'self'`` policy allows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from markupsafe import Markup, escape

from ..core import CheckStats, RerunSpread
from ..reports import spread_bars

WIDTH = 640
PASS, FAIL, MUTED, INK, MARK = "#4c9a6a", "#c8553d", "#d9d9d9", "#333333", "#3465a4"
OUTCOME_COLOURS = {
    "successful_completion": "#4c9a6a",
    "graceful_failure": "#e0b040",
    "partial_failure": "#e08a3c",
    "hard_failure": "#c8553d",
}
_LABEL = 200  # width kept for the labels left of a bar
_ROW = 24


def _svg(height: float, label: str, body: list[str]) -> Markup:
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'width="{WIDTH}" height="{height:.0f}" viewBox="0 0 {WIDTH} {height:.0f}" '
        f'aria-label="{escape(label)}">' + "".join(body) + "</svg>"
    )


def _text(x: float, y: float, text: str, anchor: str = "start", cls: str = "") -> str:
    extra = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(text)}</text>'


def _short(text: str, limit: int = 28) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def outcome_chart(outcomes: Mapping[str, int]) -> Markup:
    """One stacked bar of a rubric's executions per outcome class, with its legend."""
    total = sum(outcomes.values())
    body: list[str] = []
    x = 0.0
    if total == 0:
        body.append(f'<rect x="0" y="0" width="{WIDTH}" height="24" fill="{MUTED}"/>')
        body.append(_text(WIDTH / 2, 16, "no scored executions", "middle"))
    for name, count in outcomes.items():
        if not count or not total:
            continue
        w = WIDTH * count / total
        label = f"{name.replace('_', ' ')}: {count} ({100 * count / total:.1f}%)"
        body.append(
            f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="24" '
            f'fill="{OUTCOME_COLOURS.get(name, MUTED)}"><title>{escape(label)}</title></rect>'
        )
        x += w
    y = 44
    for i, (name, count) in enumerate(outcomes.items()):
        lx = (i % 2) * WIDTH / 2
        ly = y + (i // 2) * 20
        share = f" ({100 * count / total:.1f}%)" if total else ""
        body.append(
            f'<rect x="{lx:.1f}" y="{ly - 11}" width="12" height="12" '
            f'fill="{OUTCOME_COLOURS.get(name, MUTED)}"/>'
        )
        body.append(_text(lx + 18, ly, f"{name.replace('_', ' ')}: {count}{share}"))
    height = y + ((len(outcomes) + 1) // 2) * 20
    return _svg(height, "outcome breakdown", body)


def pass_rate_chart(checks: Sequence[CheckStats]) -> Markup:
    """One bar per check: its pass rate, with the whisker of its 95% (Wilson) interval."""
    span = WIDTH - _LABEL - 70
    body: list[str] = []
    for i, c in enumerate(checks):
        y = i * _ROW
        body.append(
            f"<g><title>{escape(_check_title(c))}</title>"
            + _text(_LABEL - 8, y + 16, _short(c.check), "end")
            + f'<rect x="{_LABEL}" y="{y + 4}" width="{span}" height="16" fill="{MUTED}"/>'
        )
        if c.pass_rate is None:
            body.append(_text(_LABEL + 6, y + 16, "never decided", cls="note") + "</g>")
            continue
        colour = PASS if c.pass_rate >= 0.8 else FAIL
        lo, hi = _LABEL + span * c.ci_low, _LABEL + span * c.ci_high
        body.append(
            f'<rect x="{_LABEL}" y="{y + 4}" width="{span * c.pass_rate:.1f}" height="16" '
            f'fill="{colour}"/>'
            f'<line x1="{lo:.1f}" y1="{y + 12}" x2="{hi:.1f}" y2="{y + 12}" stroke="{INK}" '
            f'stroke-width="1.5"/>'
            f'<line x1="{lo:.1f}" y1="{y + 7}" x2="{lo:.1f}" y2="{y + 17}" stroke="{INK}"/>'
            f'<line x1="{hi:.1f}" y1="{y + 7}" x2="{hi:.1f}" y2="{y + 17}" stroke="{INK}"/>'
            + _text(_LABEL + span + 8, y + 16, f"{100 * c.pass_rate:.1f}%")
            + "</g>"
        )
    return _svg(max(len(checks), 1) * _ROW + 4, "pass rate per check with 95% intervals", body)


def _check_title(c: CheckStats) -> str:
    rate = "never decided" if c.pass_rate is None else f"pass rate {100 * c.pass_rate:.1f}%"
    return (
        f"{c.check}: {rate}, 95% CI {100 * c.ci_low:.0f}-{100 * c.ci_high:.0f}%; "
        f"{c.passed} passed, {c.failed} failed, {c.not_applicable} n/a, {c.errored} errored"
    )


def histogram(
    values: Sequence[float],
    *,
    bins: int = 10,
    mark: float | None = None,
    mark_label: str = "",
    label: str = "score histogram",
) -> Markup:
    """Counts of ``values`` (0-100) in ``bins`` equal bins, with a vertical pass mark."""
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int(v / 100 * bins)))] += 1
    return _columns(
        [(100 * i / bins, 100 * (i + 1) / bins, n) for i, n in enumerate(counts)],
        low=0.0,
        high=100.0,
        mark=mark,
        mark_label=mark_label,
        observed=None,
        label=label,
    )


def spread_chart(spread: RerunSpread, title: str) -> Markup:
    """The simulated values of one run metric (what ``checkweigh stability`` plots): bars
    green at or above the pass mark, red below, the pass mark solid, the observed value dashed."""
    if not spread.values:
        body = [_text(WIDTH / 2, 30, f"{title}: no rerun produced a value", "middle")]
        return _svg(48, title, body)
    centres, heights, width = spread_bars(spread.values)
    bars = [(x - width / 2, x + width / 2, n) for x, n in zip(centres, heights, strict=True)]
    marks = [spread.threshold] + ([] if spread.observed is None else [spread.observed])
    low = min(bars[0][0], *marks)
    high = max(bars[-1][1], *marks)
    pad = 0.05 * (high - low) or 1.0
    return _columns(
        bars,
        low=low - pad,
        high=high + pad,
        mark=spread.threshold,
        mark_label=f"pass mark {spread.threshold:g}",
        observed=spread.observed,
        label=title,
    )


def _columns(
    bars: Sequence[tuple[float, float, int]],
    *,
    low: float,
    high: float,
    mark: float | None,
    mark_label: str,
    observed: float | None,
    label: str,
) -> Markup:
    """Vertical bars over the x range [low, high], each (from, to, count)."""
    top, plot_h, left, right = 22, 150, 40, WIDTH - 10
    tallest = max((n for _, _, n in bars), default=0) or 1

    def sx(v: float) -> float:
        return left + (right - left) * (v - low) / ((high - low) or 1.0)

    base = top + plot_h
    body = [
        f'<line x1="{left}" y1="{base}" x2="{right}" y2="{base}" stroke="{INK}"/>',
        _text(left - 4, top + 4, str(tallest), "end", "note"),
        _text(left - 4, base, "0", "end", "note"),
    ]
    for start, end, n in bars:
        h = plot_h * n / tallest
        colour = MUTED if mark is None else (PASS if (start + end) / 2 >= mark else FAIL)
        body.append(
            f'<rect x="{sx(start) + 0.5:.1f}" y="{base - h:.1f}" '
            f'width="{max(sx(end) - sx(start) - 1, 1):.1f}" height="{h:.1f}" fill="{colour}">'
            f"<title>{start:.1f} to {end:.1f}: {n}</title></rect>"
        )
    for tick in _ticks(low, high):
        body.append(_text(sx(tick), base + 16, f"{tick:g}", "middle", "note"))
    if mark is not None:
        x = sx(mark)
        body.append(
            f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{base}" stroke="{INK}" '
            f'stroke-width="2"/>'
        )
        body.append(_text(x + 4, top - 8, mark_label))
    if observed is not None:
        x = sx(observed)
        body.append(
            f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{base}" stroke="{MARK}" '
            f'stroke-width="1.5" stroke-dasharray="5 3"/>'
        )
        body.append(_text(x - 4, top + 12, f"observed {observed:.1f}", "end", "observed"))
    return _svg(base + 24, label, body)


def _ticks(low: float, high: float) -> list[float]:
    """Five to ten round values between ``low`` and ``high``."""
    span = high - low
    step = 1.0
    for candidate in (1, 2, 5, 10, 20, 25, 50, 100):
        step = float(candidate)
        if span / step <= 10:
            break
    first = -(-low // step) * step
    return [first + i * step for i in range(int((high - first) // step) + 1)]


def trend_chart(
    points: Sequence[tuple[str, float | None, tuple[float, float] | None]],
    label: str,
    *,
    mark: float | None = None,
) -> Markup:
    """A share (0-1) over time, oldest left: one dot per point (``when``, value, 95%
    interval) with the interval's whisker, the dots joined; a point without a value is a
    gap. ``mark`` draws a dashed line at that share (an alert's floor, say)."""
    top, plot_h, left, right = 14, 120, 44, WIDTH - 14
    base = top + plot_h

    def sy(v: float) -> float:
        return base - plot_h * min(max(v, 0.0), 1.0)

    step = (right - left) / max(len(points) - 1, 1)
    body = []
    for share in (0.0, 0.5, 1.0):
        y = sy(share)
        body.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{MUTED}"/>'
            + _text(left - 4, y + 4, f"{100 * share:.0f}%", "end", "note")
        )
    if mark is not None:
        y = sy(mark)
        body.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{FAIL}" '
            f'stroke-dasharray="5 3"/>'
        )
    line: list[str] = []
    for i, (when, value, interval) in enumerate(points):
        x = left + step * i if len(points) > 1 else (left + right) / 2
        if value is None:
            body.append(f"<g><title>{escape(f'{when}: nothing decided')}</title></g>")
            continue
        line.append(f"{x:.1f},{sy(value):.1f}")
        title = f"{when}: {100 * value:.1f}%"
        whisker = ""
        if interval is not None:
            title += f" (95% CI {100 * interval[0]:.1f}-{100 * interval[1]:.1f}%)"
            whisker = (
                f'<line x1="{x:.1f}" y1="{sy(interval[0]):.1f}" x2="{x:.1f}" '
                f'y2="{sy(interval[1]):.1f}" stroke="{INK}"/>'
            )
        colour = PASS if mark is None or value >= mark else FAIL
        body.append(
            f"<g><title>{escape(title)}</title>{whisker}"
            f'<circle cx="{x:.1f}" cy="{sy(value):.1f}" r="3.5" fill="{colour}"/></g>'
        )
    if len(line) > 1:
        body.insert(
            3 + (mark is not None),
            f'<polyline points="{" ".join(line)}" fill="none" stroke="{MARK}" stroke-width="1.5"/>',
        )
    if points:
        body.append(_text(left, base + 16, points[0][0], "start", "note"))
        if len(points) > 1:
            body.append(_text(right, base + 16, points[-1][0], "end", "note"))
    return _svg(base + 22, label, body)
