"""Moving a SQLite run's write-ahead log into the database on a second thread.

By default SQLite checkpoints on the writer's own commit once the log passes 1,000 pages: with
each result storing its case (13 KB for a 20-step conversation), a batch of results passes it
every time, and the scoring thread waits while the pages are copied and synced. During a run
the writer's connection defers that, and this thread checkpoints (PASSIVE: it never blocks the
writer or a reader) on its own connection; ``sqlite3`` releases the GIL while SQLite works, so
the copying overlaps the scoring on another core.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

_log = logging.getLogger("checkweigh.store")

DEFAULT_AUTOCHECKPOINT = 1000
"""SQLite's own threshold (pages), restored on the writer's connection after a run."""


class Checkpointer:
    """A thread that checkpoints ``path`` every ``every_s`` seconds until :meth:`stop`."""

    def __init__(self, path: Path, every_s: float = 0.05) -> None:
        self._path = path
        self._every = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._loop, name="checkweigh-checkpoint", daemon=True
        )
        self._thread.start()

    def _loop(self) -> None:
        try:
            conn = sqlite3.connect(self._path, timeout=0, check_same_thread=False)
        except sqlite3.Error as exc:  # the writer's own checkpoints still run
            _log.warning("cannot checkpoint %s on a second thread: %s", self._path, exc)
            return
        try:
            while not self._stop.wait(self._every):
                self._checkpoint(conn)
            self._checkpoint(conn)
        finally:
            conn.close()

    def _checkpoint(self, conn: sqlite3.Connection) -> None:
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as exc:  # busy or gone: the next round, or the writer, does it
            _log.debug("checkpoint of %s skipped: %s", self._path, exc)

    def stop(self) -> None:
        """Checkpoint once more and end the thread."""
        self._stop.set()
        self._thread.join()
