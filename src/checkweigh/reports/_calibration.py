"""Judge checks against people's labels in a report: the raw pass rate beside the calibrated
one, the judge's sensitivity and specificity, its agreement and its trust verdict."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..core import CalibratedChange, CalibratedRate, CheckCalibration, GateResult, RunSummary
from ._safe import plain

CALIBRATION_NOTE = (
    "calibrated = the share of executions a person would pass, from the judge's verdicts "
    "corrected by the labels (Rogan-Gladen, 95% interval over the run's sampling and the "
    "judge's measured error); check pass rates are corrected, and a rubric's TCR where it is "
    "linear in them; outcome classes, case pass/fail and pass^k are not"
)


def rate(value: float | None, low: float | None = None, high: float | None = None) -> str:
    """``0.812 (0.74-0.87)``, or ``—`` when unmeasured."""
    if value is None:
        return "—"
    if low is None or high is None:
        return f"{value:.3f}"
    return f"{value:.3f} ({low:.2f}-{high:.2f})"


def _kappa(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def trust_word(c: CheckCalibration) -> str:
    """The trust verdict in a word (``—`` without a bar)."""
    return "—" if c.trust is None else c.trust.status.value


def calibration_rows(c: CheckCalibration) -> list[str]:
    """One row of the calibration table, as text cells."""
    f = c.figures
    return [
        c.check,
        f"{f.labels} of {f.judged_yes + f.judged_no}",
        rate(f.raw_pass_rate, f.raw_low, f.raw_high),
        rate(f.calibrated_pass_rate, f.calibrated_low, f.calibrated_high),
        rate(f.sensitivity),
        rate(f.specificity),
        _kappa(f.weighted_kappa if f.weighted_kappa is not None else f.kappa),
        trust_word(c),
    ]


CALIBRATION_COLUMNS = (
    "judge check",
    "labelled",
    "raw pass rate",
    "calibrated",
    "sensitivity",
    "specificity",
    "kappa",
    "trust",
)


def calibration_table(summary: RunSummary) -> Table | None:
    """The judge checks measured against labels, for the console; None without any."""
    if not summary.calibration:
        return None
    table = Table(title="judge checks against people's labels", title_justify="left")
    for col in CALIBRATION_COLUMNS:
        table.add_column(col, justify="left" if col in ("judge check", "trust") else "right")
    for c in summary.calibration:
        cells = calibration_rows(c)
        table.add_row(plain(cells[0]), *(Text(cell) for cell in cells[1:]))
    return table


def calibration_lines(summary: RunSummary) -> list[Text]:
    """What a reader needs under the table: how it is computed, what each trust verdict
    needs, and labels left unused."""
    if not summary.calibration:
        return []
    out = [Text(f"note: {CALIBRATION_NOTE}", style="italic")]
    for c in summary.calibration:
        if c.trust is not None and c.trust.needs:
            out.append(plain(f"trust {c.check}: {c.trust.needs}", style="italic"))
        if c.figures.note:
            out.append(plain(f"note: {c.check}: {c.figures.note}", style="italic"))
        if c.reviewer_kappa is not None:
            out.append(
                plain(
                    f"note: {c.check}: reviewers' kappa {c.reviewer_kappa:.2f} over the "
                    "executions two of them labelled",
                    style="italic",
                )
            )
    return out


def gate_text(g: GateResult) -> str:
    """A gate's measured value: ``0.83``, ``0.83 (95% 0.78-0.88)`` or ``unmeasured``."""
    if g.actual is None:
        return "unmeasured"
    if g.low is not None and g.high is not None:
        return f"{g.actual:.4g} (95% {g.low:.3f}-{g.high:.3f})"
    return f"{g.actual:.4g}"


def _side(r: CalibratedRate | None) -> tuple[str, str]:
    if r is None:
        return "—", "— (no labels)"
    return rate(r.raw), f"{rate(r.calibrated, r.low, r.high)} [{r.labels} labels]"


def calibrated_change_rows(changes: list[CalibratedChange]) -> list[list[str]]:
    """``compare``'s rows: per judge check, each run's raw and calibrated pass rates."""
    return [[c.check, *_side(c.base), *_side(c.candidate)] for c in changes]


CHANGE_COLUMNS = (
    "judge check",
    "base raw",
    "base calibrated",
    "candidate raw",
    "candidate calibrated",
)
