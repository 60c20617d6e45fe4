"""Recorded cases judged through a provider's batch API (``judge: {mode: batch}``).

Every execution starts at once, so that the judge calls of all cases park together in the
run's :class:`~checkweigh.judges.BatchCollector`; once every execution in flight is waiting,
the :class:`BatchDriver` submits what is parked as one batch (split at the provider's
``max_items``), records the batch with the run before it polls it, and hands each answer
back. Checks that ask more than once (samples, faithfulness's two steps) go in rounds.

A resumed run (``--resume``) knows the items its batches hold: a parked call whose item was
submitted before is answered from that batch, never submitted again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..core import Case
from ..errors import InputError
from ..judges import (
    BUDGET_SPENT,
    EVALUATION,
    BatchBackend,
    BatchCollector,
    BatchItemFailure,
    BatchProgress,
    CachedJudge,
    JudgeError,
    JudgeModel,
    JudgeReply,
    Parked,
)
from ..store import Store, record_batch, reopen_run, stored_batches
from ._engine import _jobs, evaluate_case
from ._stop import Interrupted
from .executors import Sink, Work

SETTLE_S = 1.0
"""How long the driver waits for an execution that is busy with something other than the
judge (an async check's own I/O) before it submits what is parked without it."""
_STOP_POLL_S = 0.25
"""How often the runner looks at the stop flag."""
_SUBMIT_GRACE_S = 30.0
"""How long a stopped run still waits for a batch whose creation was in flight, so that its
id is kept (a resume then polls it rather than paying twice)."""

OnNote = Callable[[str], None]
"""Called with a line for the person watching (a poll's progress)."""


@dataclass(frozen=True)
class BatchSettings:
    """How a run in batch mode submits and polls."""

    backend: BatchBackend
    """The judge's batch API."""
    poll_s: float = 30.0
    """Seconds between two polls of a batch."""
    retry_sync: bool = False
    """Ask the judge synchronously for the items a batch did not answer."""


@dataclass
class BatchDriver:
    """Submits the parked calls of a run's :class:`BatchCollector` and answers them."""

    collector: BatchCollector
    store: Store
    run_id: str
    poll_s: float
    running: Callable[[], int]
    """Executions of the run not finished yet."""
    on_note: OnNote | None = None
    known: dict[str, str] = field(default_factory=dict)
    """Items submitted already (by this process or the one resumed), by custom_id: their
    batch id."""
    submitted: list[str] = field(default_factory=list)
    """The batches this process created."""
    polled: set[str] = field(default_factory=set)
    """Every batch this process waited on."""

    async def run(self) -> None:
        """Submit and answer round after round; runs until cancelled."""
        while True:
            await self._settled()
            await self._round(self.collector.waiting())

    async def _settled(self) -> None:
        """Return once every execution in flight has a call parked (or the parked ones have
        waited :data:`SETTLE_S` for the others)."""
        loop = asyncio.get_running_loop()
        changed = self.collector.changed()
        since = loop.time()
        while True:
            waiting = self.collector.waiting()
            if waiting:
                evaluations = {p.evaluation for p in waiting}
                if None not in evaluations and len(evaluations) >= self.running():
                    return
                if loop.time() - since >= SETTLE_S:
                    return
            changed.clear()
            try:
                await asyncio.wait_for(changed.wait(), SETTLE_S)
            except TimeoutError:
                continue
            since = loop.time()

    async def _round(self, parked: list[Parked]) -> None:
        backend = self.collector.backend
        waits: dict[str, list[Parked]] = {}
        new: list[Parked] = []
        for p in parked:
            batch_id = self.known.get(p.custom_id)
            if batch_id is None:
                new.append(p)
            else:
                waits.setdefault(batch_id, []).append(p)
        if new and not self.collector.budget_left():
            _answer(new, {}, "", failure=BUDGET_SPENT)
            new = []
        size = max(1, backend.max_items)
        for start in range(0, len(new), size):
            chunk = new[start : start + size]
            try:
                batch_id = await self._submit(chunk)
            except JudgeError as exc:  # nothing was created: these calls end errored
                _answer(chunk, {}, f"not submitted: {exc}")
                continue
            waits[batch_id] = chunk
        await self._poll(waits)

    async def _submit(self, chunk: Sequence[Parked]) -> str:
        backend = self.collector.backend
        ids = [p.custom_id for p in chunk]
        task = asyncio.ensure_future(backend.submit([(p.custom_id, p.request) for p in chunk]))
        try:
            batch_id = await asyncio.shield(task)
        except asyncio.CancelledError:
            # stopped while the batch was being created: it may exist all the same, and is
            # paid for; keep its id so that --resume polls it instead of submitting again
            try:
                batch_id = await asyncio.wait_for(task, _SUBMIT_GRACE_S)
            except Exception:  # noqa: BLE001 - not created, or unknown: nothing to keep
                raise asyncio.CancelledError from None
            self._keep(batch_id, ids)
            raise
        self._keep(batch_id, ids)
        return batch_id

    def _keep(self, batch_id: str, ids: list[str]) -> None:
        record_batch(self.store, self.run_id, self.collector.backend.name, batch_id, ids)
        self.submitted.append(batch_id)
        self.known.update((cid, batch_id) for cid in ids)

    async def _poll(self, waits: dict[str, list[Parked]]) -> None:
        backend = self.collector.backend
        began = time.monotonic()
        self.polled.update(waits)
        while waits:
            seen: list[BatchProgress] = []
            for batch_id in list(waits):
                try:
                    progress = await backend.progress(batch_id)
                    if not progress.done:
                        seen.append(progress)
                        continue
                    results = await backend.results(batch_id)
                except JudgeError as exc:
                    _answer(waits.pop(batch_id), {}, f"batch {batch_id}: {exc}")
                    continue
                seen.append(progress)
                why = progress.detail or progress.state
                _answer(waits.pop(batch_id), results, f"no result ({why})")
            self._say(seen, time.monotonic() - began)
            # a run waits hours for its batches without writing a result: beat, so that a
            # process on another host does not take it for dead (its heartbeat goes stale)
            self.store.heartbeat(self.run_id)
            if waits:
                await asyncio.sleep(self.poll_s)

    def _say(self, seen: list[BatchProgress], elapsed: float) -> None:
        if self.on_note is None or not seen:
            return
        done = sum(p.succeeded for p in seen)
        failed = sum(p.failed for p in seen)
        total = sum(p.total for p in seen)
        states = ", ".join(f"{p.batch_id} {p.state}" for p in seen)
        self.on_note(
            f"judge batch {states}: {done} done, {failed} failed of {total} "
            f"({elapsed:.0f} s elapsed)"
        )


def _answer(
    parked: list[Parked],
    results: dict[str, JudgeReply | BatchItemFailure],
    missing: str,
    *,
    failure: BatchItemFailure | None = None,
) -> None:
    missed = failure or BatchItemFailure(missing)
    for p in parked:
        if not p.answer.done():
            p.answer.set_result(results.get(p.custom_id) or missed)


async def run_batched(
    work: Work, sink: Sink, driver: Callable[[Callable[[], int]], BatchDriver]
) -> None:
    """Evaluate ``work``'s cases all at once, their judge calls answered by the driver that
    ``driver`` makes (given the count of executions still running). The cases are read
    before anything is submitted: a bad one stops the run with nothing paid.

    Raises:
        Interrupted: ``work.stop`` was requested: the running executions were cancelled (the
            batches stay with the run, for ``--resume``).
    """
    jobs = list(_jobs(work.cases, work.repeat))
    stop = work.stop
    running = [len(jobs)]

    async def one(n: int, index: int, r: int, case: Case, body: bytes | None) -> None:
        EVALUATION.set(n)
        result = await evaluate_case(
            work.evaluator,
            case,
            target=work.target,
            timeout_s=work.target_timeout_s,
            repeat=r,
            index=index,
            body=body,
        )
        running[0] -= 1
        sink.add(result)

    tasks = [asyncio.ensure_future(one(n, *job)) for n, job in enumerate(jobs)]
    pool: asyncio.Future[list[None]] = asyncio.gather(*tasks)
    polling: asyncio.Future[None] = asyncio.ensure_future(driver(lambda: running[0]).run())
    try:
        while not pool.done():
            watched: set[asyncio.Future[object]] = {pool, polling}  # type: ignore[arg-type]
            await asyncio.wait(watched, timeout=_STOP_POLL_S, return_when="FIRST_COMPLETED")
            if stop is not None and stop.requested:
                raise Interrupted(stop.reason)
            if polling.done():
                polling.result()  # the driver failed (the store, say): the run stops with it
        pool.result()
    finally:
        for task in (*tasks, polling):
            task.cancel()
        await asyncio.gather(pool, polling, return_exceptions=True)


async def judge_in_batches(
    work: Work,
    sink: Sink,
    store: Store,
    run_id: str,
    collector: BatchCollector,
    batch: BatchSettings,
    on_note: OnNote | None,
) -> list[str]:
    """A run's cases evaluated with their judge calls sent in provider batches (see
    :mod:`._batched`); the notes say which batches answered them."""
    known = {cid: b.batch_id for b in stored_batches(store, run_id) for cid in b.custom_ids}
    drivers: list[BatchDriver] = []

    def driver(running: Callable[[], int]) -> BatchDriver:
        made = BatchDriver(collector, store, run_id, batch.poll_s, running, on_note, known)
        drivers.append(made)
        return made

    await run_batched(work, sink, driver)
    polled = sorted(drivers[0].polled) if drivers else []
    if not polled:
        return [
            "judge calls: batch mode, every answer came from the judge cache (nothing submitted)"
        ]
    made = len(drivers[0].submitted)
    return [
        f"judge calls: provider batch API, at half the list price ({len(polled)} batch(es): "
        f"{', '.join(polled)}; {made} submitted by this process, "
        f"{len(polled) - made} resumed)"
    ]


def reopen_checked(store: Store, ref: str, snapshot: dict[str, object]) -> str:
    """The stopped run ``ref`` made running again, after checking it was made by the same
    suite and settings (``--resume``).

    Raises:
        InputError: no such run, not resumable, or made with another configuration.
    """
    info = store.get_run(ref)
    stored = info.config
    differ = sorted(k for k in stored.keys() | snapshot.keys() if stored.get(k) != snapshot.get(k))
    if differ:
        raise InputError(
            f"run {info.id} was made with another suite or settings (they differ in "
            f"{', '.join(differ)}): resume it with the suite and flags it was started with",
            field="--resume",
        )
    return reopen_run(store, info.id)


def collecting(
    judge: JudgeModel | None, batch: BatchSettings | None
) -> tuple[BatchCollector | None, JudgeModel | None]:
    """The collector that parks the run's judge calls in batch mode, behind the judge cache
    (a cached answer is never submitted), and the judge the checks then ask."""
    if batch is None or judge is None:
        return None, judge
    if isinstance(judge, CachedJudge):
        judge.judge = collector = BatchCollector(
            judge.judge, batch.backend, retry_sync=batch.retry_sync
        )
        return collector, judge
    collector = BatchCollector(judge, batch.backend, retry_sync=batch.retry_sync)
    return collector, collector
