"""``--workers N``: recorded cases parsed and scored by N worker processes on this machine."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..._workers_server import start_method
from ...core import CaseResult
from ...errors import CheckweighError
from ...judges import JudgeModel
from ...store import Handoff, Rows
from ...suites import Suite
from .._agent_source import RunAgent
from ._base import LOCAL, Sink, Work
from ._blocks import Block
from ._blocks import blocks as cut_blocks
from ._chunks import STOP_GRACE_S, chunks_of, stream
from ._worker import (
    Chunk,
    Scored,
    Stored,
    WorkerSpec,
    ignore_interrupts,
    score_chunk,
    store_chunk,
)

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from .._options import RunOptions

CHUNK = 2048
"""Cases per chunk: ~75 ms of a worker's time on 1.7 KB cases, so the driver hands out and
collects few messages, the workers commit few transactions (the write-ahead log stays near
a third of the database; chunks of 512 let it grow past the database's size). A stop does
not wait for a whole chunk: a worker ends its chunk before the next case (see stream)."""


RETRIES = 2
"""Times a chunk is tried again after its worker process died."""


class WorkerLost(CheckweighError):
    """A worker process died (a check crashed the interpreter, or it was killed)."""


class ProcessExecutor:
    """Recorded cases scored by ``workers`` processes (see :func:`start_method`: nothing of the
    driver's is inherited); the driver cuts the cases file into byte ranges and accounts for
    what the workers stored, in the cases' order.

    A script that runs it must guard its entry point with ``if __name__ == "__main__":``
    (each worker imports the script's main module, as with ``spawn`` process pools).
    """

    name = "processes"
    runs_agents = False
    records_agents = False

    def __init__(self, workers: int, *, chunk: int = CHUNK) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.workers = workers
        self.chunk = chunk
        # the cases file as count() cut it, for the run to hand out: (path, identity, blocks)
        self._cut: tuple[Path, tuple[int, ...], list[tuple[Block, int]]] | None = None
        start_method()  # the workers' server starts now, while the driver sets the run up

    @classmethod
    def from_options(cls, options: RunOptions) -> ProcessExecutor:
        """``options.workers`` processes (with 1: as many as this machine has CPUs)."""
        return cls(options.workers if options.workers > 1 else os.cpu_count() or 1)

    def counts_cases(self, suite: Suite, *, asks_judge: bool) -> int | None:
        """The cases of a run of ``suite`` when the workers read, validate and score every
        one themselves (a checkweigh JSONL file, no agent, no judge asked): a bad case or a
        repeated id then stops the run where the workers meet it, so the file needs no
        screening in the driver beforehand (a run that must keep nothing of a bad file
        deletes what it stored). None otherwise: the run reads them."""
        if suite.target is None and not asks_judge and suite.cases.streamed:
            return self.count(suite.cases.path)
        return None

    def count(self, path: Path) -> int:
        """How many cases the JSONL file ``path`` holds, by its non-blank lines, none of them
        read further (the workers validate each: see :meth:`reads_every_case`). The file is
        cut into the run's chunks on the way, which the next run of it hands out unless the
        file changed since.

        Raises:
            CaseFileError: the file cannot be read.
        """
        cut = list(cut_blocks(path, self.chunk))
        self._cut = (path.resolve(), _identity(path), cut)
        return sum(n for _, n in cut)

    def _cut_before(self, path: Path) -> list[tuple[Block, int]] | None:
        """The blocks :meth:`count` cut ``path`` into, if the file is as it was then."""
        if self._cut is None:
            return None
        cut_path, identity, cut = self._cut
        self._cut = None
        same = cut_path == path.resolve() and identity == _identity(path)
        return cut if same else None

    def agent(self, suite: Suite, judge: JudgeModel | None = None) -> RunAgent | None:
        """The driver builds the suite's target (a run with one refuses ``--workers``)."""
        return None

    async def run(self, work: Work, sink: Sink) -> list[str]:
        """Score ``work`` on the worker processes; judged cases stay in the driver, whose
        one pool asks the judge."""
        if work.target is not None or work.asks_judge:
            await LOCAL.run(work, sink)
            return [
                f"--workers {self.workers}: cases that call an agent or ask the judge are "
                "evaluated in the driver (the judge's pool bounds them, not the CPU)"
            ]
        # imported here: a command that starts no worker does not pay for them
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        context = start_method()
        spec = work.spec
        task: Callable[[WorkerSpec, Chunk], Scored | Stored] = score_chunk
        handoff = sink.handoff
        acked = _Acked(sink)  # the stored prefix the driver accounted for, and keeps
        if handoff is not None:
            # the workers build the store's rows (the driver then only inserts them), or
            # store their chunks themselves, each in one transaction while the others score
            # (SQLite takes one writer at a time), and hand the driver only their
            # aggregates: the driver, on a core the workers share, merges them
            spec = replace(spec, handoff=handoff)
            if handoff.file is not None:
                task = store_chunk

        # set on a stop: the workers end their chunks before their next case (see stream)
        halted = context.RawValue("b", 0)
        ends = [float("inf")]  # when a worker still busy after a stop is killed

        def halt() -> None:
            if not halted.value:
                halted.value = 1
                ends[0] = time.monotonic() + STOP_GRACE_S

        def start(workers: int) -> ProcessPoolExecutor:
            # a lock per pool: a worker killed while holding it takes its pool down with it
            return ProcessPoolExecutor(
                workers,
                mp_context=context,
                initializer=ignore_interrupts,
                initargs=(context.Lock(), halted),
            )

        pools = [start(self.workers)]
        # chunks tried again, one process each: waited for too before what was stored past
        # the acknowledged cases is deleted
        solos: list[ProcessPoolExecutor] = []

        def on(pool: ProcessPoolExecutor, chunk: Chunk) -> asyncio.Future[Scored | Stored]:
            return asyncio.wrap_future(pool.submit(task, spec, chunk))

        # submit() names no pool in its frame: a chunk cancelled while it waits keeps its
        # frame (in its error), and a pool kept alive keeps its lock, a semaphore that a
        # process leaving at once would leak
        async def submit(chunk: Chunk) -> Scored | Stored:
            tried = len(pools)
            try:
                return await on(pools[-1], chunk)
            except BrokenProcessPool:
                if len(pools) == tried:  # the first chunk to see it starts the next pool
                    pools[-1].shutdown(wait=False, cancel_futures=True)
                    pools.append(start(self.workers))
            # a dead worker breaks the whole pool and every chunk in flight in it: each is
            # tried again in a process of its own, so only the chunk that kills its worker
            # every time stops the run (a stored chunk's rows are replaced: its first try
            # may have committed before its process died)
            chunk = chunk.retried(spec.cases)
            for _ in range(RETRIES):
                solos.append(start(1))
                at = len(solos) - 1
                try:
                    return await on(solos[at], chunk)
                except BrokenProcessPool:
                    continue
                finally:
                    if at < len(solos):  # (not yet let go by the run's end)
                        solos[at].shutdown(wait=False, cancel_futures=True)
            raise WorkerLost(
                f"a worker process died while scoring cases {chunk.first + 1}.."
                f"{chunk.first + len(chunk)}, {RETRIES + 1} times (a check crashed it, or it "
                "was killed); run without --workers to see which case"
            )

        try:
            await stream(
                submit,
                chunks_of(work, self.chunk, blocks=True, cut=self._cut_before(spec.cases)),
                window=2 * self.workers + 1,
                sink=acked,
                stop=work.stop,
                path=work.spec.cases if work.source is not None else None,
                halt=halt,
                watch=work.evaluator.watch,
            )
        except BaseException:
            # the chunks still running end (a worker ignores Ctrl-C, and a stop halts its
            # chunk before the next case) or are stopped (see _stopped); then what they
            # committed past the acknowledged cases goes, so the store holds exactly what the
            # run reports
            halt()
            for pool in [pools[-1], *solos]:
                _stopped(pool, ends[0])
            del pool  # see below
            if task is store_chunk:
                sink.discard(acked.stored)
            raise
        finally:
            pools[-1].shutdown(wait=True, cancel_futures=True)
            # the pools hold their write locks (semaphores): let them go now, not when an
            # error that ended the run (which refers to this frame) is let go, which a
            # process leaving at once never does
            pools.clear()
            solos.clear()
        return []


class _Acked:
    """The run's sink, counting the executions of the chunks that workers stored: the
    prefix the run keeps when it stops early."""

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self.handoff: Handoff | None = sink.handoff
        self.stored = 0

    def add(self, result: CaseResult) -> None:
        self._sink.add(result)

    def flush(self) -> None:
        self._sink.flush()

    def add_rows(self, results: list[CaseResult], rows: Rows) -> None:
        self._sink.add_rows(results, rows)

    def add_stored(self, stored: Stored) -> None:
        self._sink.add_stored(stored)
        self.stored += len(stored.case_ids)

    def discard(self, start: int) -> None:
        self._sink.discard(start)


def _stopped(pool: ProcessPoolExecutor, deadline: float) -> None:
    """``pool`` shut down, its queued chunks cancelled, and its workers waited for: those
    still busy at ``deadline`` (:data:`STOP_GRACE_S` after the stop, in one case that long:
    a check that hangs) are killed, so every run ends."""
    # the pool's processes, which its API lets go of only from Python 3.14 (kill_workers)
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.join(max(deadline - time.monotonic(), 0))
        if worker.exitcode is None:
            worker.kill()
    pool.shutdown(wait=True)


def _identity(path: Path) -> tuple[int, ...]:
    """What changes when a file is written (its inode, size and modification time); empty
    when it cannot be read."""
    try:
        st = path.stat()
    except OSError:
        return ()
    return (st.st_ino, st.st_size, st.st_mtime_ns)
