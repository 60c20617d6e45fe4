"""Where a run's cases are evaluated: in this process (``local``, the default), in worker
processes (``processes``, ``--workers N``), as Ray tasks across a cluster (``ray``, the ``ray``
extra; imported only when used), or by a plugin's executor (entry-point group
``checkweigh.executors``). The driver always stores the results and asks the judge: an
executor hands every result back through the run's :class:`Sink`."""

import typing as _typing

from ... import _lazy

if _typing.TYPE_CHECKING:
    from ._base import LOCAL as LOCAL
    from ._base import Executor as Executor
    from ._base import LocalExecutor as LocalExecutor
    from ._base import Sink as Sink
    from ._base import Work as Work
    from ._processes import ProcessExecutor as ProcessExecutor
    from ._processes import WorkerLost as WorkerLost
    from ._registry import EXECUTORS as EXECUTORS
    from ._registry import ExecutorKind as ExecutorKind
    from ._registry import executor_name as executor_name
    from ._registry import make_executor as make_executor
    from ._worker import Stored as Stored
    from ._worker import WorkerSpec as WorkerSpec
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
