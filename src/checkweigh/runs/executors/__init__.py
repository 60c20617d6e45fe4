"""Where a run's cases are evaluated: in this process (``local``, the default), in worker
processes (``processes``, ``--workers N``), as Ray tasks across a cluster (``ray``, the ``ray``
extra; imported only when used), or by a plugin's executor (entry-point group
``checkweigh.executors``). The driver always stores the results and asks the judge: an
executor hands every result back through the run's :class:`Sink`."""

from ._base import LOCAL, Executor, LocalExecutor, Sink, Work
from ._processes import ProcessExecutor, WorkerLost
from ._registry import EXECUTORS, ExecutorKind, executor_name, make_executor
from ._worker import Stored, WorkerSpec

__all__ = [
    "EXECUTORS",
    "LOCAL",
    "Executor",
    "ExecutorKind",
    "LocalExecutor",
    "ProcessExecutor",
    "Sink",
    "Stored",
    "Work",
    "WorkerLost",
    "WorkerSpec",
    "executor_name",
    "make_executor",
]
