"""``--executor ray``: agents and deterministic checks as Ray tasks across a cluster.

What runs where:

- **Workers** (Ray tasks, one CPU each) rebuild the suite from its file (:class:`WorkerSpec`),
  then either run one case through the agent and answer its checks that need no judge, or
  parse and score a chunk of recorded cases.
- **The driver** (this process) reads the cases, keeps a bounded number of tasks in flight
  (back-pressure: ``--concurrency`` agent cases, or twice the cluster's CPUs), asks the judge
  for the judge checks under its one pool (so ``--judge-concurrency`` is the cluster-wide
  limit, and the judge's cache and statistics stay whole), stores every result and writes the
  report, exactly as a local run.
- **A lost worker** (killed, its node gone) is retried by Ray (``max_retries``); a case whose
  retries are spent is stored as errored with the reason, a chunk's stops the run (stored as
  incomplete with what finished). Nothing is dropped silently.

Ray is imported here only, and this module only when ``--executor ray`` is asked for.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import TYPE_CHECKING, Any

from ...core import SimulatedUser
from ...errors import CheckweighError, InputError
from ...judges import JudgeModel
from ...suites import Suite
from .._agent_source import RunAgent
from .._engine import CheckedRun, Evaluator, run_local
from ..targets import AgentFailure, AgentRun, Target, TargetRequest, conversing
from ..targets.conversation import ConversationFailure
from ._base import LOCAL, Sink, Work
from ._chunks import chunks_of, stream
from ._processes import WorkerLost
from ._worker import Chunk, Ran, Scored, WorkerSpec, run_case, run_turn, score_chunk

if TYPE_CHECKING:
    from .._options import RunOptions

MAX_RETRIES = 3
"""Times Ray runs a task again whose worker died (killed, out of memory, its node lost)."""
RAY_CHUNK = 1024
"""Recorded cases per Ray task: a task costs a few milliseconds of scheduling and object
transfer, so chunks are twice a local worker's."""


def connect(address: str | None) -> RayExecutor:
    """Join the Ray cluster at ``address`` (None: Ray's default: ``RAY_ADDRESS``, a cluster
    started on this machine, else a new local one).

    Raises:
        InputError: Ray is not installed, or the cluster cannot be reached.
    """
    try:
        import ray
    except ImportError:
        raise InputError(
            "Ray is not installed; install the extra: pip install 'checkweigh[ray]'",
            field="--executor",
        ) from None
    if address is not None:
        _probe(address)
    try:
        ray.init(
            address=address,
            logging_level=logging.ERROR,
            log_to_driver=False,  # an agent's prints stay out of the report
            configure_logging=True,
            include_dashboard=False,
        )
    except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError...
        text = " ".join(str(exc).split())[:200] or type(exc).__name__
        where = address or "the default address"
        raise InputError(
            f"cannot join the Ray cluster at {where}: {text}", field="--ray-address"
        ) from None
    return RayExecutor(ray, address)


PROBE_S = 5.0
"""How long joining a cluster may take to answer at all: Ray itself retries for minutes."""


def _probe(address: str) -> None:
    """Refuse at once an address that is not HOST:PORT or that nothing listens on.

    Raises:
        InputError: naming ``--ray-address``.
    """
    if address == "auto":
        return
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(
            f"expected HOST:PORT (or ray://HOST:PORT, or auto), got {address!r}",
            field="--ray-address",
        )
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_S).close()
    except OSError as exc:
        raise InputError(
            f"cannot join the Ray cluster at {address}: {exc.strerror or exc}",
            field="--ray-address",
        ) from None


class RayExecutor:
    """Cases evaluated as Ray tasks; see the module's docstring."""

    name = "ray"
    runs_agents = True
    records_agents = False  # the agent runs on the cluster: its calls are not in the driver

    def __init__(self, ray: Any, address: str | None, *, chunk: int = RAY_CHUNK) -> None:
        self.ray = ray
        self.address = address
        self.chunk = chunk
        self._run_case = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(run_case)
        self._run_turn = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(run_turn)
        self._score_chunk = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(score_chunk)

    @property
    def cpus(self) -> int:
        """The cluster's CPUs now."""
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    def agent(self, suite: Suite, judge: JudgeModel | None = None) -> RunAgent | None:
        """The suite's agent, run by the workers (None: recorded cases). A simulated user
        speaks through ``judge``, in the driver: its conversation is held here and each of
        the agent's turns is a task."""
        if suite.target is None:
            return None
        spec = WorkerSpec.of(suite, Evaluator.from_suite(suite), with_agent=True)
        kind = suite.target.kind
        turns = conversing(RemoteTurns(self, spec, kind), suite.target, judge)
        # the worker applies the agent's time limit: the driver's would count the queue
        return RunAgent(RayAgent(RemoteTarget(self, spec, kind), turns), None, None)

    @classmethod
    def from_options(cls, options: RunOptions) -> RayExecutor:
        """Joins the cluster at ``options.ray_address`` (see :func:`connect`).

        Raises:
            InputError: Ray is not installed, or the cluster cannot be reached.
        """
        return connect(options.ray_address)

    def counts_cases(self, suite: Suite, *, asks_judge: bool) -> int | None:
        """None: the driver reads the cases (and validates them) before it ships them."""
        return None

    async def run(self, work: Work, sink: Sink) -> list[str]:
        """Evaluate ``work`` on the cluster, handing results on in the driver."""
        where = f"Ray cluster {self.address or '(default)'}, {self.cpus} CPUs"
        if work.target is not None:
            await run_local(
                work.evaluator,
                work.cases,
                sink.add,
                target=work.target,
                target_timeout_s=None,
                repeat=work.repeat,
                concurrency=work.concurrency,
                stop=work.stop,
                on_batch=sink.flush,
            )
            return [f"agent and checks run as Ray tasks on the {where}; judge calls by the driver"]
        if work.asks_judge:
            await LOCAL.run(work, sink)
            return [
                "recorded cases with judge checks are scored in the driver, which asks the judge"
            ]

        async def submit(chunk: Chunk) -> Scored:
            try:
                scored: Scored = await self._score_chunk.remote(work.spec, chunk)
            except self.ray.exceptions.RayTaskError as exc:  # it raised: not retried
                cause = getattr(exc, "cause", None)
                if isinstance(cause, CheckweighError):  # e.g. the suite changed meanwhile
                    raise cause from None
                raise
            except self.ray.exceptions.RayError as exc:
                raise WorkerLost(
                    f"cases {chunk.first + 1}..{chunk.first + len(chunk)} could not be scored "
                    f"on the Ray cluster after {MAX_RETRIES} retries: {_reason(exc)}"
                ) from None
            return scored

        await stream(
            submit,
            chunks_of(work, self.chunk),
            window=2 * self.cpus,
            sink=sink,
            stop=work.stop,
            path=work.spec.cases if work.source is not None else None,
            watch=work.evaluator.watch,
        )
        return [f"recorded cases scored as Ray tasks on the {where}"]


class RayAgent:
    """A case with a simulated user is a conversation held in the driver (whose judge
    speaks for the user), an agent turn per task; any other case is one task, scripted
    conversations included."""

    def __init__(self, whole: RemoteTarget, turns: Target) -> None:
        self.whole = whole
        self.turns = turns
        self.kind = whole.kind

    async def run(self, request: TargetRequest) -> AgentRun:
        """Run ``request``'s case on the cluster.

        Raises:
            AgentFailure: as :class:`RemoteTarget` and :class:`ConversationTarget` raise it.
        """
        if isinstance(request.case.user, SimulatedUser):
            return await self.turns.run(request)
        return await self.whole.run(request)

    async def aclose(self) -> None:
        """Close the simulated users' models (the workers keep their agents)."""
        await self.turns.aclose()


class _OnRay:
    """The suite's agent as Ray tasks run it (the workers keep it for the run's next tasks)."""

    def __init__(self, executor: RayExecutor, spec: WorkerSpec, kind: str) -> None:
        self.executor = executor
        self.spec = spec
        self.kind = kind

    async def aclose(self) -> None:
        """Nothing to close: the workers keep their agents for the next run."""


class RemoteTarget(_OnRay):
    """The suite's agent run by a Ray task, which also answers the checks that need no
    judge; the driver's engine treats it as any target (its concurrency is the number of
    tasks in flight)."""

    async def run(self, request: TargetRequest) -> AgentRun:
        """Run one case on the cluster.

        Raises:
            AgentFailure: the agent failed, or its worker was lost more than Ray retries.
        """
        ref = self.executor._run_case.remote(self.spec, request.case, request.repeat)
        ran = await _ran(self.executor.ray, ref)
        if ran.outcome == "failed":
            if ran.case is not None:  # a scripted conversation broke off: keep its turns
                raise ConversationFailure(ran.reason, ran.case)
            raise AgentFailure(ran.reason)
        return CheckedRun(
            trace=ran.trace or [],
            final_state=ran.final_state or {},
            usage=ran.usage,
            latency_ms=ran.latency_ms,
            answered=ran.answered or {},
        )


class RemoteTurns(_OnRay):
    """The agent's turns of a conversation held in the driver, each a Ray task."""

    async def run(self, request: TargetRequest) -> AgentRun:
        """The agent's answer to one turn.

        Raises:
            AgentFailure: the agent failed, or its worker was lost more than Ray retries.
        """
        ran = await _ran(self.executor.ray, self.executor._run_turn.remote(self.spec, request))
        if ran.outcome == "failed":
            raise AgentFailure(ran.reason)
        return AgentRun(trace=ran.trace or [], final_state=ran.final_state or {}, usage=ran.usage)


async def _ran(ray: Any, ref: Any) -> Ran:
    """What the task behind ``ref`` sent back (it is cancelled with the await).

    Raises:
        AgentFailure: the task raised, or its worker was lost more than Ray retries.
    """
    try:
        ran: Ran = await ref
    except asyncio.CancelledError:
        ray.cancel(ref, force=True)
        raise
    except ray.exceptions.RayTaskError as exc:  # it raised (not retried): e.g. no suite
        cause = getattr(exc, "cause", None) or exc
        raise AgentFailure(f"the Ray worker could not run the case: {_reason(cause)}") from None
    except ray.exceptions.RayError as exc:
        raise AgentFailure(
            f"the Ray task running the case failed after {MAX_RETRIES} retries: {_reason(exc)}"
        ) from None
    return ran


def _reason(exc: BaseException) -> str:
    """Ray's error in one line (its own messages span many)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return (lines[0] if lines else type(exc).__name__)[:200]
