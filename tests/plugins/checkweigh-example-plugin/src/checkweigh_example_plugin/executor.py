"""An executor in one file: ``checkweigh run --executor inline`` scores a suite's recorded
cases one at a time in the driver, each result handed to the run's sink as it finishes.

It shows the whole seam: what an executor declares it supports (recorded cases only, no
agent recording), how it is made from the run's options, and how results leave it (one
``sink.add`` per result; the run stores them and counts them in the summary).
"""

from __future__ import annotations

from checkweigh.core import Case
from checkweigh.judges import JudgeModel
from checkweigh.runs import RunOptions
from checkweigh.runs.executors import Sink, Work
from checkweigh.suites import Suite


class InlineExecutor:
    """Recorded cases scored in turn, in the process that runs ``checkweigh run``."""

    name = "inline"
    runs_agents = False  # a suite with an agent target is refused before the run starts
    records_agents = False  # so are --record-agent and --replay-agent

    @classmethod
    def from_options(cls, options: RunOptions) -> InlineExecutor:
        """One executor per run; it takes no option of its own."""
        return cls()

    def agent(self, suite: Suite, judge: JudgeModel | None = None) -> None:
        """No agent of its own: it runs recorded cases only."""
        return None

    def counts_cases(self, suite: Suite, *, asks_judge: bool) -> int | None:
        """None: the run reads (and, for ``checkweigh run``, validates) the cases first."""
        return None

    async def run(self, work: Work, sink: Sink) -> list[str]:
        """Score every case ``work.repeat`` times, handing each result to ``sink``."""
        executions = 0
        for index, item in enumerate(work.cases):
            # a case read from a JSONL file comes with its line's bytes, kept for the store
            case, body = item if isinstance(item, tuple) else (item, None)
            assert isinstance(case, Case)
            for repeat in range(work.repeat):
                if work.stop is not None:
                    work.stop.raise_if_requested()  # a stop ends the run between cases
                result = await work.evaluator.aevaluate(case, repeat=repeat, index=index, body=body)
                sink.add(result)
                executions += 1
        return [f"inline executor: {executions} execution(s) scored one at a time"]
