"""``--workers N``: recorded cases parsed and scored by N worker processes on this machine."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from ...errors import CheckweighError
from ...judges import JudgeModel
from ...suites import Suite
from .._agent_source import RunAgent
from .._engine import OnResult
from . import _worker as _worker_module
from ._base import LOCAL, Work
from ._chunks import chunks_of, stream
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
    from multiprocessing.context import BaseContext

CHUNK = 512
"""Cases per chunk: a few milliseconds of a worker's time, so the driver hands out and
collects few messages, and a stop waits for little."""


RETRIES = 2
"""Times a chunk is tried again after its worker process died."""


class WorkerLost(CheckweighError):
    """A worker process died (a check crashed the interpreter, or it was killed)."""


def start_method() -> BaseContext:
    """How worker processes start: forked from a fresh server process that imported
    checkweigh once (``forkserver``), so a worker starts in milliseconds instead of an
    interpreter's start and 0.3 s of imports each, and still inherits nothing of the driver
    (no connection, no thread); ``spawn`` where there is no fork.

    The server is started at the first call and serves the process's later runs.
    """
    import multiprocessing
    from multiprocessing import forkserver

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([_worker_module.__name__])
    forkserver.ensure_running()  # the server imports while the driver goes on
    return context


class ProcessExecutor:
    """Recorded cases scored by ``workers`` processes (see :func:`start_method`: nothing of the
    driver's is inherited); the driver cuts the cases file into byte ranges and accounts for
    what the workers stored, in the cases' order.

    A script that runs it must guard its entry point with ``if __name__ == "__main__":``
    (each worker imports the script's main module, as with ``spawn`` process pools).
    """

    name = "processes"

    def __init__(self, workers: int, *, chunk: int = CHUNK) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.workers = workers
        self.chunk = chunk
        start_method()  # the workers' server starts now, while the driver sets the run up

    def agent(self, suite: Suite, judge: JudgeModel | None = None) -> RunAgent | None:
        """The driver builds the suite's target (a run with one refuses ``--workers``)."""
        return None

    async def run(self, work: Work, on_result: OnResult) -> list[str]:
        """Score ``work`` on the worker processes; judged cases stay in the driver, whose
        one pool asks the judge."""
        if work.target is not None or work.asks_judge:
            await LOCAL.run(work, on_result)
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
        on_stored = None
        acked = [0]  # executions the driver accounted for: the stored prefix it keeps
        if work.db is not None and work.run_id is not None and work.on_stored is not None:
            # the workers store their chunks themselves, each in one transaction while the
            # other scores (SQLite takes one writer at a time), and hand the driver only
            # their aggregates: the driver, on a core the workers share, merges them
            spec = replace(spec, run_id=work.run_id, db=work.db)
            task = store_chunk
            merge = work.on_stored

            def on_stored(stored: Stored) -> None:
                merge(stored)
                acked[0] += len(stored.case_ids)

        elif work.on_rows is not None and work.run_id is not None:
            # the workers build the store's rows: the driver then only inserts them
            spec = replace(spec, run_id=work.run_id)

        def start(workers: int) -> ProcessPoolExecutor:
            # a lock per pool: a worker killed while holding it takes its pool down with it
            return ProcessPoolExecutor(
                workers,
                mp_context=context,
                initializer=ignore_interrupts,
                initargs=(context.Lock(),),
            )

        pools = [start(self.workers)]
        # chunks tried again, one process each: waited for too before what was stored past
        # the acknowledged cases is deleted
        solos: list[ProcessPoolExecutor] = []

        async def submit(chunk: Chunk) -> Scored | Stored:
            pool = pools[-1]
            try:
                return await asyncio.wrap_future(pool.submit(task, spec, chunk))
            except BrokenProcessPool:
                if pools[-1] is pool:  # the first chunk to see it starts the next pool
                    pool.shutdown(wait=False, cancel_futures=True)
                    pools.append(start(self.workers))
            # a dead worker breaks the whole pool and every chunk in flight in it: each is
            # tried again in a process of its own, so only the chunk that kills its worker
            # every time stops the run (a stored chunk's rows are replaced: its first try
            # may have committed before its process died)
            chunk = chunk.retried(spec.cases)
            for _ in range(RETRIES):
                solo = start(1)
                solos.append(solo)
                try:
                    return await asyncio.wrap_future(solo.submit(task, spec, chunk))
                except BrokenProcessPool:
                    continue
                finally:
                    solo.shutdown(wait=False, cancel_futures=True)
            raise WorkerLost(
                f"a worker process died while scoring cases {chunk.first + 1}.."
                f"{chunk.first + len(chunk)}, {RETRIES + 1} times (a check crashed it, or it "
                "was killed); run without --workers to see which case"
            )

        try:
            await stream(
                submit,
                chunks_of(work, self.chunk, blocks=True),
                window=2 * self.workers + 1,
                on_result=on_result,
                stop=work.stop,
                path=work.spec.cases if work.source is not None else None,
                on_rows=work.on_rows,
                on_stored=on_stored,
            )
        except BaseException:
            # the chunks still running finish (a worker ignores Ctrl-C) or die with their
            # pool; then what they committed past the acknowledged cases goes, so the store
            # holds exactly what the run reports
            for pool in [pools[-1], *solos]:
                pool.shutdown(wait=True, cancel_futures=True)
            if on_stored is not None and work.discard is not None:
                work.discard(acked[0])
            raise
        finally:
            pools[-1].shutdown(wait=True, cancel_futures=True)
        return []
