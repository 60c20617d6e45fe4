"""Reading many stored results at once without the garbage collector's cost.

Loading a 10,000-case run builds some 300,000 small containers, all kept: every collection
the allocations trigger walks the growing heap and finds nothing to free, which made reading
a run several times slower than decoding it. None of those objects form cycles that need the
collector while they are read; it runs again (and catches up) once the outermost read ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause automatic garbage collection while the block runs (re-entrant, across threads:
    the collector is enabled again, if it was, when the last paused block ends)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
