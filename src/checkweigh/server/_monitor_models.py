"""The monitors' API answers (``/api/monitors``): what a monitor is, its windows' figures, the
failing traces of a window, and the scorer's queue. Shares are 0-1; times are UTC."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

Interval = tuple[float, float]


class _Out(BaseModel):
    # each field's docstring is its description in /openapi.json
    model_config = ConfigDict(use_attribute_docstrings=True)


class RuleOut(_Out):
    """One alert rule of a monitor, as its file states it."""

    check: str
    """The check whose pass rate the rule watches."""
    text: str
    """The rule in words, e.g. ``looked_up below 90% at alpha 0.05``."""
    below: float | None = None
    """The floor the pass rate must not be significantly below (None: a ``drop`` rule)."""
    drop: bool = False
    """Whether the rule fires on a significant drop against the previous window."""
    alpha: float
    """The rule's significance level: the largest share of windows it fires in when nothing
    changed."""
    false_alarms: str
    """The expected false-alarm rate in words, at this monitor's window."""


class CheckRate(_Out):
    """One check's verdicts in a window, and its pass rate."""

    check: str
    """The check's name."""
    passed: int
    """Traces where it passed."""
    failed: int
    """Traces where it failed."""
    not_applicable: int
    """Traces where it did not apply (a judge check not sampled is one)."""
    errored: int
    """Traces where it could not decide."""
    pass_rate: float | None
    """passed / (passed + failed); None when it never decided."""
    interval: Interval
    """The pass rate's 95% Wilson interval ((0, 1) when it never decided)."""


class RubricRate(_Out):
    """One rubric's Task Completion Rate in a window."""

    rubric: str
    """The rubric's name."""
    scored: int
    """Traces it scored."""
    tcr: float | None
    """The mean score of the scored traces; None when none was scored."""
    interval: Interval | None
    """The TCR's 95% t-interval; None when fewer than two traces were scored."""


class AlertOut(_Out):
    """What one alert rule decided when a window closed, as the window stored it."""

    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True)

    check: str
    """The rule's check."""
    rule: str
    """The rule in words."""
    state: str
    """``fired``, ``quiet`` or ``undecided`` (too few verdicts, or no previous window)."""
    rate: float | None = None
    """The window's pass rate of the check."""
    interval: list[float] | None = None
    """Its 95% interval."""
    p_value: float | None = None
    """The one-sided p-value of the rule's test; None when undecided."""
    reason: str = ""
    """The decision in one sentence."""
    false_alarm_rate: float | None = None
    """The chance this window fired with nothing wrong (at most the rule's alpha)."""
    webhook: dict[str, Any] | None = None
    """Whether the alert's webhook was delivered (``ok``, ``status``, ``error``), for a rule
    that fired on a monitor with a webhook."""


class WindowOut(_Out):
    """One window of a monitor: a run in the store, and its figures."""

    start: datetime
    """When the window began (UTC)."""
    end: datetime
    """When it ends (UTC)."""
    run_id: str
    """The window's run: ``/api/runs/{run_id}`` and the run page read it like any run."""
    closed: bool
    """Whether it ended and its summary and alert decisions are stored."""
    traces: int
    """Traces the monitor scored in it."""
    judged: int
    """Of those, the traces whose judge checks ran."""
    skipped_rate: int
    """Traces whose judge checks the sampling rate left out."""
    skipped_budget: int
    """Traces whose judge checks were left out because the hour's judge budget was spent."""
    judge_calls: int
    """Judge calls made for it (cache hits excluded)."""
    judge_usd: float
    """Their cost in US dollars at the monitor's judge prices (0 without prices)."""
    executions: int
    """Results stored in its run."""
    cases_passed: int
    """Traces whose case verdict passed."""
    pass_rate: float | None
    """cases_passed / executions; None when nothing was scored."""
    pass_rate_interval: Interval | None
    """The pass rate's 95% Wilson interval."""
    tcr: float | None
    """The mean case score (0-1) of the traces that produced one."""
    tcr_interval: Interval | None
    """The mean case score's 95% t-interval."""
    rubrics: list[RubricRate]
    """Each rubric's TCR, in suite order."""
    checks: list[CheckRate]
    """Each check's pass rate (as the first rubric weighing it counts it), in suite order."""
    alerts: list[AlertOut]
    """The alert rules' decisions, once the window closed."""


class BudgetOut(_Out):
    """The monitor's judge spend in the current clock hour, against its budget."""

    hour: datetime
    """The hour's start (UTC)."""
    calls: int
    """Judge calls spent (reserved) this hour, by every server process."""
    usd: float
    """US dollars spent this hour."""
    calls_per_hour: int | None
    """The budget's calls per hour (None: no limit)."""
    usd_per_hour: float | None
    """The budget's dollars per hour (None: no limit)."""


class MonitorOut(_Out):
    """A monitor this server runs: what it scores and how, and its newest windows."""

    name: str
    """The monitor's name."""
    suite: str
    """The name of the suite whose checks and rubrics it scores with."""
    window: str
    """Its window (``60s``, ``15m``, ``1h``...)."""
    window_s: float
    """Its window in seconds."""
    filter: dict[str, Any]
    """Which traces it scores (service, resource and span attributes); empty: every trace."""
    sample_judge: float
    """The share of matching traces whose judge checks run."""
    budget: dict[str, Any] | None
    """Its judge budget per hour (``calls_per_hour``, ``usd_per_hour``); None: none."""
    judge: str | None
    """Its judge as PROVIDER:MODEL; None: its judge checks are left out."""
    judge_checks: list[str]
    """The checks the judge decides."""
    alerts: list[RuleOut]
    """Its alert rules."""
    webhook: bool
    """Whether fired alerts are posted to a webhook (its URL is not shown: it may hold a
    secret)."""
    windows: list[WindowOut] = Field(default_factory=list)
    """Its newest windows, newest first."""


class QueueOut(_Out):
    """The store's queue of received traces, shared by every server process."""

    open: int
    """Traces still receiving spans, or waiting to be scored."""
    claimed: int
    """Traces a process is scoring now."""
    done: int
    """Traces scored (or found to make no case)."""
    late_spans: int
    """Spans that came after their trace was taken to be scored (not in its case)."""
    chunks: int
    """Stored OTLP requests (per trace) not yet removed by the retention."""


class ScorerOut(_Out):
    """What this server process's scorer did since it started."""

    claimed: int
    """Traces it took from the queue."""
    cases: int
    """Traces that made a case, whether a monitor's filter took them or not."""
    matched: dict[str, int]
    """Per monitor, the cases its filter took (0 for a filter that took none)."""
    scored: int
    """Traces it made a case of and scored."""
    no_case: int
    """Traces that made no case (no GenAI span, say)."""
    lost_leases: int
    """Traces another process took over before this one stored them (scored there)."""
    errors: int
    """Failures (the server's log has each)."""
    last_error_in: str | None
    """Where the last failure happened (the log has the rest: it may name the database)."""


class MonitorsOut(_Out):
    """Every monitor this server runs, the queue, and this process's scorer."""

    monitors: list[MonitorOut]
    """The monitors, each with its newest windows."""
    queue: QueueOut
    """The queue of received traces."""
    scorer: ScorerOut | None
    """This process's scorer; None when it scores nothing (no ``--monitor``)."""


class MonitorDetailOut(_Out):
    """One monitor: its windows, newest first, and its judge spend this hour."""

    monitor: MonitorOut
    """The monitor, its windows included."""
    budget: BudgetOut
    """The judge spend this clock hour."""


class FailedCheck(_Out):
    """A check that failed on a trace."""

    check: str
    """The check's name."""
    reason: str
    """Why it failed, as the check said."""


class FailingTrace(_Out):
    """A trace of a window with at least one failed check."""

    trace_id: str
    """The trace's id: its case id in the window's run."""
    repeat: int
    """The execution's repeat (0: a window scores each trace once)."""
    url: str
    """Its case page on this server."""
    failed: list[FailedCheck]
    """The checks that failed, in the suite's order."""


class FailingOut(_Out):
    """The failing traces of one window."""

    monitor: str
    """The monitor's name."""
    run_id: str
    """The window's run."""
    start: datetime
    """When the window began (UTC)."""
    check: str | None
    """Only traces that failed this check; None: any check."""
    total: int
    """How many traces failed (the check) in all."""
    items: list[FailingTrace]
    """This page's traces, in the order they were scored."""
