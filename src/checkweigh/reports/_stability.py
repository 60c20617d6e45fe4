"""Gate stability as pictures: the score distribution across simulated reruns with its pass
marks, as a PNG and as a self-contained HTML page.

matplotlib (drawn off screen with Agg, no pyplot state) and Jinja2 come with the optional
``plots`` extra; :func:`plots_missing` says what to install when they are not there.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import itertools
import math
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..core import CheckNoise, RerunSpread, StabilityReport
from ._safe import clean, plain

PLOTS_HINT = "pip install 'checkweigh[plots]'"
_SHOWN_CASES = 50
_SHOWN_ON_CONSOLE = 10
_BINS = 40
_PASS_COLOUR, _FAIL_COLOUR = "#4c9a6a", "#c8553d"


def plots_missing() -> str | None:
    """None when the plots extra is installed, else which package is missing and the fix."""
    for module in ("matplotlib", "jinja2"):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a module blocked in sys.modules, a broken install
            found = False
        if not found:
            return f"{module} is not installed: {PLOTS_HINT}"
    return None


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _samples(n: CheckNoise) -> str:
    """``3``, or ``auto, at most 9 (2.4 on average)`` for adaptive samples."""
    if not n.adaptive:
        return str(n.samples)
    mean = f" ({n.mean_samples:.1f} on average)" if n.mean_samples is not None else ""
    return f"auto, at most {n.samples}{mean}"


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}"


def render_stability(out: Console, report: StabilityReport, *, suite: str, run_id: str) -> None:
    """The report on a console; case ids and check names are printed literally."""
    out.print(
        plain(
            f"Gate stability of run {run_id} ({suite}): {report.simulations} simulated reruns, "
            f"seed {report.seed}, {len(report.cases)} execution(s)",
            style="bold",
        ),
        soft_wrap=True,
    )
    noise = Table(title="noise", title_justify="left", header_style="bold")
    for col in ("check", "source", "per-answer noise", "samples", "verdict flips per rerun"):
        noise.add_column(col, justify="left" if col in ("check", "source") else "right")
    for n in report.noise:
        measured = f" ({n.answers} answers)" if n.source == "measured" else ""
        noise.add_row(
            plain(n.check),
            n.source + measured,
            f"{n.answer_noise:.3f}",
            _samples(n),
            _pct(n.flip) + (f" (+{_pct(n.tie)} errored)" if n.tie else ""),
        )
    out.print(noise)
    gates = Table(title="gates", title_justify="left", header_style="bold")
    for col in ("gate", "observed", "chance a rerun differs"):
        gates.add_column(col, justify="right" if col.startswith("chance") else "left")
    for g in report.gates:
        flaky = "yellow" if g.flip.p > 0 else ""
        gates.add_row(
            plain(g.gate),
            "pass" if g.observed_passed else "FAIL",
            Text(f"{_pct(g.flip.p)} ± {_pct(g.flip.se)}", style=flaky),
        )
    out.print(gates)
    spread = Table(title="across the reruns", title_justify="left", header_style="bold")
    for col in ("metric", "observed", "mean", "95% of reruns", "pass mark"):
        spread.add_column(col, justify="left" if col == "metric" else "right")
    for s, label in ((report.metrics, "mean case score"), (report.cases_rate, "cases pass rate")):
        inside = Text(" inside the spread", style="yellow") if s.threshold_inside else ""
        spread.add_row(
            label,
            _num(s.observed),
            _num(s.mean),
            f"{_num(s.low)} to {_num(s.high)}",
            Text.assemble(f"{s.threshold:g}", inside),
        )
    out.print(spread)
    for w in report.warnings:
        out.print(Text.assemble(("warning:", "bold yellow"), " ", clean(w)), soft_wrap=True)
    flaky_cases = [c for c in report.cases if c.flip.p > 0.0]
    if flaky_cases:
        shown = flaky_cases[:_SHOWN_ON_CONSOLE]
        repeats = any(c.repeat for c in report.cases)
        title = f"flakiest executions ({len(shown)} of the {len(flaky_cases)} that can change)"
        cases = Table(title=title, title_justify="left", header_style="bold")
        cases.add_column("case")
        if repeats:
            cases.add_column("repeat", justify="right")
        for col in ("observed", "score", "chance a rerun differs", "95% score range"):
            cases.add_column(col, justify="right")
        for c in shown:
            cells: list[Text | str] = [plain(c.case_id), *([str(c.repeat)] if repeats else [])]
            cases.add_row(
                *cells,
                plain(c.observed),
                _num(c.score_pct),
                f"{_pct(c.flip.p)} ± {_pct(c.flip.se)}",
                f"{_num(c.score_low)} to {_num(c.score_high)}",
            )
        out.print(cases)
    else:
        out.print(Text("no execution changed its pass/fail in the simulated reruns"))
    for note in report.notes:
        out.print(plain(f"note: {note}", style="italic"), soft_wrap=True)


def spread_bars(values: list[float]) -> tuple[list[float], list[int], float]:
    """Bar centres, heights and width. Simulated metrics sit on a lattice (a pass rate on
    multiples of 100/n): a bin holds a whole number of lattice steps, so no bin is empty by
    aliasing; few distinct values get one bar each."""
    counts = Counter(values)
    xs = sorted(counts)
    step = min((b - a for a, b in itertools.pairwise(xs)), default=1.0)
    per_bin = max(1, math.ceil((xs[-1] - xs[0]) / step / _BINS - 1e-9))
    width = step * per_bin
    heights: Counter[int] = Counter()
    for x, n in counts.items():
        heights[int((x - xs[0] + step / 2) // width)] += n
    centres = [xs[0] - step / 2 + (i + 0.5) * width for i in range(max(heights) + 1)]
    return centres, [heights[i] for i in range(len(centres))], 0.9 * width


def _panel(ax: Any, spread: RerunSpread, title: str, reruns: int) -> None:
    ax.set_title(title, fontsize=11)
    ax.set_xlabel("percent")
    ax.set_ylabel(f"reruns (of {reruns})")
    if spread.values:
        xs, heights, width = spread_bars(spread.values)
        colours = [_PASS_COLOUR if x >= spread.threshold else _FAIL_COLOUR for x in xs]
        ax.bar(xs, heights, width=width, color=colours, edgecolor="white", linewidth=0.5)
        marks = [spread.threshold] + ([] if spread.observed is None else [spread.observed])
        low, high = min(xs[0] - width, *marks), max(xs[-1] + width, *marks)
        ax.set_xlim(low - 0.03 * (high - low + 1), high + 0.03 * (high - low + 1))
    else:
        ax.text(0.5, 0.5, "no rerun produced a value", transform=ax.transAxes, ha="center")
    ax.axvline(
        spread.threshold,
        color="black",
        linestyle="-",
        linewidth=1.8,
        label=f"pass mark {spread.threshold:g}",
    )
    if spread.observed is not None:
        ax.axvline(
            spread.observed,
            color="#3465a4",
            linestyle="--",
            linewidth=1.5,
            label=f"observed {spread.observed:.1f}",
        )
    ax.legend(loc="upper left", fontsize=8, frameon=False)


def stability_png(report: StabilityReport, title: str = "") -> bytes:
    """Histograms of the simulated mean case score and cases pass rate, each with its pass
    mark (solid) and the observed value (dashed), as PNG bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    n = report.simulations
    _panel(left, report.metrics, "metrics: mean case score", n)
    _panel(right, report.cases_rate, "cases: pass rate", n)
    if title:  # user text: control characters shown escaped, "$" never read as mathtext
        fig.suptitle(clean(title), fontsize=12, parse_math=False)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def write_stability_png(path: Path, report: StabilityReport, title: str = "") -> None:
    """Write :func:`stability_png` to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(stability_png(report, title))


_TEMPLATE = """\
<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>checkweigh stability: {{ suite }} {{ run_id }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; max-width: 70rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25rem 0.75rem; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.warn { color: #a33; } .note { color: #555; } img { max-width: 100%; }
</style></head><body>
<h1>Gate stability of {{ suite }}</h1>
<p>Run <code>{{ run_id }}</code>: {{ r.simulations }} simulated reruns (seed {{ r.seed }}),
{{ r.cases | length }} execution(s).</p>
{% for w in r.warnings %}<p class="warn">warning: {{ w }}</p>{% endfor %}
<h2>Gates</h2>
<table><tr><th>gate</th><th>observed</th><th>chance a rerun differs</th></tr>
{% for g in r.gates %}<tr><td>{{ g.gate }}</td><td>{{ "pass" if g.observed_passed else "fail" }}
</td><td class="num">{{ pct(g.flip.p) }} &plusmn; {{ pct(g.flip.se) }}</td></tr>{% endfor %}
</table>
<table><tr><th>metric</th><th>observed</th><th>mean</th><th>95% of reruns</th>
<th>pass mark</th></tr>
{% for s in [r.metrics, r.cases_rate] %}<tr><td>{{ s.metric }}</td><td class="num">
{{ num(s.observed) }}</td><td class="num">{{ num(s.mean) }}</td><td class="num">
{{ num(s.low) }} to {{ num(s.high) }}</td><td class="num">{{ "%g" % s.threshold }}
{{ "(inside)" if s.threshold_inside else "" }}</td></tr>{% endfor %}
</table>
<img alt="score distribution across simulated reruns" src="data:image/png;base64,{{ png }}">
<h2>Noise</h2>
<table><tr><th>check</th><th>source</th><th>per-answer noise</th><th>samples</th>
<th>verdict flips per rerun</th></tr>
{% for n in r.noise %}<tr><td>{{ n.check }}</td><td>{{ n.source }}</td>
<td class="num">{{ "%.3f" % n.answer_noise }}</td><td class="num">{{ samples(n) }}</td>
<td class="num">{{ pct(n.flip) }}</td></tr>{% endfor %}
</table>
<h2>Flakiest executions</h2>
<table><tr><th>case</th><th>repeat</th><th>observed</th><th>score</th>
<th>chance a rerun differs</th><th>95% score range</th><th>noisy checks</th></tr>
{% for c in flaky %}<tr><td>{{ c.case_id }}</td><td class="num">{{ c.repeat }}</td>
<td>{{ c.observed }}</td><td class="num">{{ num(c.score_pct) }}</td>
<td class="num">{{ pct(c.flip.p) }} &plusmn; {{ pct(c.flip.se) }}</td>
<td class="num">{{ num(c.score_low) }} to {{ num(c.score_high) }}</td>
<td>{{ c.noisy_checks | join(", ") }}</td></tr>{% endfor %}
</table>
{% if more %}<p>and {{ more }} more that can change (all of them are in the JSON report).</p>
{% endif %}<p>{{ steady }} execution(s) never changed in the simulated reruns.</p>
{% for n in r.notes %}<p class="note">note: {{ n }}</p>{% endfor %}
</body></html>
"""


def _inert(value: Any) -> Any:
    """Jinja's finalize: every printed string has its control characters shown escaped (the
    escapes are plain ASCII, so already-escaped markup stays safe)."""
    from markupsafe import Markup

    if isinstance(value, Markup):
        return Markup(clean(str(value)))
    return clean(value) if isinstance(value, str) else value


def render_stability_html(report: StabilityReport, *, suite: str, run_id: str) -> str:
    """The report as one HTML page (every user string escaped, its control characters shown
    escaped), the plot inlined as PNG."""
    from jinja2 import Environment

    env = Environment(autoescape=True, keep_trailing_newline=True, finalize=_inert)
    flaky = [c for c in report.cases if c.flip.p > 0.0]
    return env.from_string(_TEMPLATE).render(
        r=report,
        suite=suite,
        run_id=run_id,
        png=base64.b64encode(stability_png(report)).decode("ascii"),
        flaky=flaky[:_SHOWN_CASES],
        steady=len(report.cases) - len(flaky),
        more=max(0, len(flaky) - _SHOWN_CASES),
        pct=_pct,
        num=_num,
        samples=_samples,
    )


def write_stability_html(path: Path, report: StabilityReport, *, suite: str, run_id: str) -> None:
    """Write :func:`render_stability_html` to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_stability_html(report, suite=suite, run_id=run_id), encoding="utf-8")
