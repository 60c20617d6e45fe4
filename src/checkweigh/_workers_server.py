"""The server that ``--workers`` processes are forked from, in a module of its own: the CLI
starts it before it imports what a run needs, so the server's imports overlap its own."""

from __future__ import annotations

import multiprocessing
from multiprocessing import forkserver
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

WORKER_MODULE = "checkweigh.runs.executors._worker"
"""What the server imports once, for every worker it forks."""


def start_method() -> BaseContext:
    """How worker processes start: forked from a fresh server process that imported
    checkweigh once (``forkserver``), so a worker starts in milliseconds instead of an
    interpreter's start and 0.3 s of imports each, and still inherits nothing of the driver
    (no connection, no thread); ``spawn`` where there is no fork.

    The server is started at the first call and serves the process's later runs.
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([WORKER_MODULE])
    forkserver.ensure_running()  # the server imports while the driver goes on
    return context
