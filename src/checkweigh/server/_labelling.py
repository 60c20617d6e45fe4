"""A judge check's labelling queue in one run: its executions in the order a person is asked
to label them, with the labels made so far, the progress against the label budget, the
calibrated rate as those labels now stand and the reviewers' agreement.

Only executions the judge decided (yes or no) are queued: an errored or not-applicable verdict
says nothing about the judge's error rates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..core import CheckCalibration, VerdictState
from ..store import CheckLabels, LabelledExecution, RunInfo, Store, judge_checks_of, run_labels
from . import _calibrated
from ._errors import ApiError, bad_parameter, quoted

Order = Literal["queue", "random", "labelled"]
ORDERS: tuple[Order, ...] = ("queue", "random", "labelled")
"""``queue``: where a label narrows the calibrated rate most; ``random``: a seeded shuffle;
``labelled``: the executions already labelled, fewest labels first (a second opinion)."""
ORDER_LABELS = {
    "queue": "queue (labels where they narrow the rate most)",
    "random": "random",
    "labelled": "second opinion (already labelled)",
}
DEFAULT_BUDGET = 50
"""The label budget of a judge check whose spec sets no ``trust.min_labels``."""
MAX_BUDGET = 1_000_000
TARGET_HALF_WIDTH = 0.05
"""The calibrated interval's half-width the page counts the labels still needed for."""


def judge_checks(info: RunInfo) -> list[str]:
    """The run's judge checks, in its configuration's order."""
    return judge_checks_of(info.config)


def _spec(info: RunInfo, check: str) -> dict[str, Any]:
    snapshot = (info.config.get("checks") or {}).get(check) or {}
    spec = snapshot.get("spec") if isinstance(snapshot, dict) else None
    return spec if isinstance(spec, dict) else {}


def judge_check(info: RunInfo, check: str, field: str = "check") -> str:
    """``check`` when it is one of the run's judge checks; 404 (not in the run) or 422 (not
    judged) otherwise."""
    if check not in (info.config.get("checks") or {}):
        raise ApiError(404, f"{field}: run {info.id} has no check {quoted(check)}")
    if check not in judge_checks(info):
        raise bad_parameter(field, f"{quoted(check)} is not a judge check of run {info.id}")
    return check


def default_budget(info: RunInfo, check: str) -> int:
    """The check's ``trust.min_labels`` when its spec sets one, else 50."""
    trust = _spec(info, check).get("trust")
    wanted = trust.get("min_labels") if isinstance(trust, dict) else None
    if isinstance(wanted, int) and not isinstance(wanted, bool) and wanted > 0:
        return wanted
    return DEFAULT_BUDGET


@dataclass(frozen=True)
class Queue:
    """What the labelling page and ``GET /api/runs/{run}/labels/{check}`` show."""

    info: RunInfo
    check: str
    question: str
    judge: str | None
    labels: CheckLabels
    order: Order
    budget: int
    items: list[LabelledExecution]
    """The executions to present, in order (all of them; callers page)."""
    calibration: CheckCalibration
    """The figures, the trust verdict and the reviewers' kappa as the labels now stand."""
    more_labels: int | None
    """Labels still needed for the calibrated interval to reach ±5 points; None when not
    known."""
    overlap: int
    """Executions two reviewers labelled."""

    @property
    def decided(self) -> int:
        """Executions the judge said yes or no to."""
        return len(self.labels.decided)

    @property
    def labelled(self) -> int:
        """Decided executions with a label."""
        return self.labels.labelled


def queue(store: Store, info: RunInfo, check: str, order: Order, budget: int | None) -> Queue:
    """The labelling queue of the judge check ``check`` in ``info``'s run."""
    labels = run_labels(store, info.id, [check])[check]
    decided = labels.decided
    confusion = labels.confusion()
    if order == "labelled":
        done = [(len(e.labels), i) for i, e in enumerate(decided) if e.labels]
        items = [decided[i] for _, i in sorted(done)]
    else:
        verdicts = [e.execution.state is VerdictState.PASSED for e in decided]
        labelled = {i for i, e in enumerate(decided) if e.labels}
        picked = _calibrated.presented(verdicts, labelled, confusion, shuffled=order == "random")
        items = [decided[i] for i in picked]
    cal = _calibrated.measured(info, labels)
    return Queue(
        info=info,
        check=check,
        question=str(_spec(info, check).get("question") or ""),
        judge=info.config.get("judge"),
        labels=labels,
        order=order,
        budget=default_budget(info, check) if budget is None else budget,
        items=items,
        calibration=cal,
        more_labels=_calibrated.labels_to_width(cal.figures, TARGET_HALF_WIDTH),
        overlap=len(labels.reviewer_pairs()),
    )


def prompt_text(execution: LabelledExecution) -> str:
    """The evidence the judge saw: its prompt's user message(s) (the system message is the
    judge's instructions, the same for every execution)."""
    messages = execution.execution.messages
    users = [m.content for m in messages if m.role == "user"]
    return "\n\n".join(users) if users else "\n\n".join(m.content for m in messages)


def verdict_word(state: VerdictState) -> str:
    """``yes``, ``no``, or the state of an execution the judge did not decide."""
    return {VerdictState.PASSED: "yes", VerdictState.FAILED: "no"}.get(state, state.value)
