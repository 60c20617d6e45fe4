"""One run written through Store and ResultWriter in its own process, for the concurrency tests.

    python _writer_process.py URL NAME RESULTS READY_FILE GO_FILE

Signals READY_FILE and waits for GO_FILE, so that the writers start together: each opens the
store (racing the others to create the schema of a new database), starts a run, writes RESULTS
results in batches of 7 and marks the run complete. Prints the run id.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from checkweigh.core import (
    CaseResult,
    Rubric,
    RubricItem,
    RunAggregator,
    failed,
    passed,
    score_rubric,
)
from checkweigh.store import ResultWriter, RunStatus, Store

RUBRIC = Rubric.build("completion", [RubricItem("correct_time", 1.0)])
CONFIG = {"rubrics": [{"name": "completion", "weights": {"correct_time": 1.0}}]}


def result(name: str, index: int) -> CaseResult:
    ok = index % 3 != 0
    verdicts = {"correct_time": passed("10:00") if ok else failed(f"{name} booked 11:00")}
    scored = score_rubric(RUBRIC, verdicts, {"final_state": {"success": ok}})
    return CaseResult(f"{name}-{index}", 0, verdicts, {"completion": scored}, 1.0, None, index)


def main(url: str, name: str, count: int, ready: Path, go: Path) -> None:
    ready.touch()
    deadline = time.monotonic() + 60
    while not go.exists():
        if time.monotonic() > deadline:
            raise SystemExit("the other writer never got ready")
        time.sleep(0.002)
    with Store(url) as store:
        run_id = store.create_run(name, "suite.yaml", CONFIG, 1)
        aggregator = RunAggregator([RUBRIC])
        with ResultWriter(store, run_id, batch_size=7, max_delay_s=3600) as writer:
            for i in range(count):
                r = result(name, i)
                writer.add(r)
                aggregator.add(r)
        store.finish_run(run_id, RunStatus.COMPLETE, aggregator.summary())
    print(run_id)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]), Path(sys.argv[5]))
