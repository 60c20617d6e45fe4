"""The cyclic garbage collector during a run: what existed before it is left out of its passes."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_running = 0


@contextmanager
def older_objects_frozen() -> Iterator[None]:
    """Leave the objects that exist when a run starts out of the collector until it ends.

    Every case's parsed JSON is thousands of containers that live for the whole of its
    scoring, so they reach the collector's oldest generation, and each full pass then walks
    again every object the process already had (modules, schemas, the database engine):
    about a tenth of the time of a fast run. Frozen, those are skipped; when the last of the
    process's runs ends they are handed back, so garbage made before the run is still
    collected, after it.
    """
    global _running
    with _lock:
        if _running == 0:
            gc.freeze()
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                gc.unfreeze()


_paused_lock = threading.Lock()
_paused = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection while this process only moves results it does not keep: a
    worker scoring a chunk, the driver unpickling and storing what the workers send back.

    Those are tens of thousands of short-lived, acyclic objects a second (freed as their
    counts drop), and each pass of the collector over them finds nothing: measured, the
    passes cost a worker a fifth of its time and doubled the driver's unpickling. Cyclic
    garbage made meanwhile is collected once the last pause ends.
    """
    global _paused, _was_enabled
    with _paused_lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _paused_lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()
