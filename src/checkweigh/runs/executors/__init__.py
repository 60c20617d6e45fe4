"""Where a run's cases are evaluated: in this process (the default), in worker processes
(``--workers N``), or as Ray tasks across a cluster (``--executor ray``, the ``ray`` extra;
imported only when used). The driver always stores the results and asks the judge."""

from ._base import LOCAL, Executor, LocalExecutor, Work
from ._processes import ProcessExecutor, WorkerLost
from ._worker import WorkerSpec

__all__ = [
    "LOCAL",
    "Executor",
    "LocalExecutor",
    "ProcessExecutor",
    "Work",
    "WorkerLost",
    "WorkerSpec",
]
