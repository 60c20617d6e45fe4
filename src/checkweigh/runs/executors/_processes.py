"""``--workers N``: recorded cases parsed and scored by N worker processes on this machine."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from ...errors import CheckweighError
from ...judges import JudgeModel
from ...suites import Suite
from .._agent_source import RunAgent
from .._engine import OnResult
from ._base import LOCAL, Work
from ._chunks import chunks_of, stream
from ._worker import Chunk, Scored, ignore_interrupts, score_chunk

CHUNK = 512
"""Cases per chunk: a few milliseconds of a worker's time, so the driver hands out and
collects few messages, and a stop waits for little."""


RETRIES = 2
"""Times a chunk is tried again after its worker process died."""


class WorkerLost(CheckweighError):
    """A worker process died (a check crashed the interpreter, or it was killed)."""


class ProcessExecutor:
    """Recorded cases scored by ``workers`` processes (spawned, so nothing of the driver's
    is inherited); the driver reads lines and stores results, in the cases' order.

    A script that runs it must guard its entry point with ``if __name__ == "__main__":``
    (each worker imports the script's main module, as with any ``spawn`` process pool).
    """

    name = "processes"

    def __init__(self, workers: int, *, chunk: int = CHUNK) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.workers = workers
        self.chunk = chunk

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
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        context = multiprocessing.get_context("spawn")
        spec = work.spec
        if work.on_rows is not None and work.run_id is not None:
            # the workers build the store's rows: the driver, on a core the workers share,
            # then only inserts them
            spec = replace(spec, run_id=work.run_id)

        def start(workers: int) -> ProcessPoolExecutor:
            return ProcessPoolExecutor(workers, mp_context=context, initializer=ignore_interrupts)

        pools = [start(self.workers)]

        async def submit(chunk: Chunk) -> Scored:
            pool = pools[-1]
            try:
                return await asyncio.wrap_future(pool.submit(score_chunk, spec, chunk))
            except BrokenProcessPool:
                if pools[-1] is pool:  # the first chunk to see it starts the next pool
                    pool.shutdown(wait=False, cancel_futures=True)
                    pools.append(start(self.workers))
            # a dead worker breaks the whole pool and every chunk in flight in it: each is
            # tried again in a process of its own, so only the chunk that kills its worker
            # every time stops the run
            for _ in range(RETRIES):
                solo = start(1)
                try:
                    return await asyncio.wrap_future(solo.submit(score_chunk, spec, chunk))
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
                chunks_of(work, self.chunk),
                window=2 * self.workers + 1,
                on_result=on_result,
                stop=work.stop,
                path=work.spec.cases if work.source is not None else None,
                on_rows=work.on_rows,
            )
        finally:
            pools[-1].shutdown(wait=True, cancel_futures=True)
        return []
