"""What a run is asked, as plain data: :class:`RunOptions`, the one value that
:func:`checkweigh.arun`, ``checkweigh run`` and any server share (as httpx groups its
settings in ``Timeout`` and ``Limits``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class JudgeSetup(BaseModel):
    """The judge a run builds (``--judge`` and the ``--judge-*`` flags); unset fields keep the
    suite's ``judge:`` block or the defaults. A judge built from it is the run's: the run
    closes it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: str | None = None
    """PROVIDER:MODEL, e.g. ``ollama:llama3.1`` (None: no judge, unless one is given)."""
    no_cache: bool = False
    """Bypass the judge cache."""
    replay: bool = False
    """Answer from the cache only; a miss errors."""
    concurrency: Annotated[int, Field(ge=1, le=1024)] | None = None
    """Judge calls at once."""
    timeout_s: float | None = None
    """Seconds per attempt."""
    retries: int | None = None
    """Retries per call."""
    deadline_s: float | None = None
    """Seconds one call may take, retries included."""
    format: str | None = None
    """Structured output: auto, json_schema, json_object or prompt."""
    batch: bool = False
    """One checklist call per case for the yes/no checks (also for a judge given as an
    object)."""
    prices: str | None = None
    """USD per million tokens as ``INPUT,OUTPUT`` (e.g. ``0.15,0.6``), for the cost."""
    budget_usd: float | None = None
    """No judge call is sent once the cost at ``prices`` reaches this many US dollars; the
    checks that would have called end errored, reason "budget" (needs ``prices``)."""
    mode: Literal["sync", "batch"] | None = None
    """``batch``: collect the judge calls of a recorded run and send them through the
    provider's batch API (``--judge-mode``; None: the suite's ``judge: {mode}``, else sync)."""
    poll_s: float | None = None
    """Seconds between two polls of a batch (None: the suite's ``poll_s``, else 30)."""
    retry_sync: bool | None = None
    """Ask synchronously for the items a batch did not answer (``--judge-retry-sync``)."""


class Thresholds(BaseModel):
    """This run's overrides of the suite's pass thresholds (0-100; None keeps the suite's)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pass_threshold: float | None = None
    """The score a case without expected outcomes needs (``--pass-threshold``)."""
    metrics_threshold: float | None = None
    """The mean case score the run needs (``--metrics-threshold``)."""
    cases_threshold: float | None = None
    """The percentage of executions that must pass (``--cases-threshold``)."""


class RunOptions(BaseModel):
    """How to run a suite: every option of ``checkweigh run`` that is not about where the
    results go (the store) or which files are written afterwards.

    Plain, frozen data: it can be built from a request body, compared and printed. The
    defaults run the suite as its file says, in this process, with no judge.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    cases: Path | None = None
    """A cases file read instead of the suite's (in the suite's format)."""
    on_bad_record: Literal["skip", "fail"] | None = None
    """A log record that cannot be read: stop, or skip and report it (None: the suite's)."""
    repeat: Annotated[int, Field(ge=1, le=10_000)] | None = None
    """Executions of each case (None: the suite's ``repeats``, default 1)."""
    concurrency: Annotated[int, Field(ge=1, le=1024)] | None = None
    """Cases at once (agent targets; None: the target's)."""
    judge: JudgeSetup = JudgeSetup()
    """The judge to build for the judge checks (see :class:`JudgeSetup`)."""
    graded_weights: tuple[str, ...] = ()
    """``METRIC=WEIGHT`` items for the graded checks, this run only (0 drops a metric)."""
    thresholds: Thresholds = Thresholds()
    """Threshold overrides."""
    record_agent: Path | None = None
    """A folder to record every agent call into (``--record-agent``)."""
    replay_agent: Path | None = None
    """A recording to answer the agent calls from, with no agent running
    (``--replay-agent``)."""
    executor: str = "local"
    """Where cases are evaluated (``--executor``): ``local`` (this process), ``processes``
    (worker processes on this machine), ``ray`` (a Ray cluster), or a plugin's executor."""
    workers: Annotated[int, Field(ge=1, le=256)] = 1
    """Worker processes (``--workers``): more than 1 with ``local`` means ``processes``;
    ``processes`` with 1 uses as many as this machine has CPUs."""
    ray_address: str | None = None
    """The Ray cluster to join (``--ray-address``; None: Ray's own default)."""
    resume: str | None = None
    """A batch-judged run stopped while it waited for its batches (``--resume``): it is
    finished under its own id, its stored batches polled again, nothing submitted twice."""
    screen: bool = False
    """Read and validate every case of the cases file before the run is created, so that a
    bad case refuses the run with nothing stored, and the total is known (as ``checkweigh
    run`` does). Without it, the cases are read as they run, and a bad one stops the run."""
