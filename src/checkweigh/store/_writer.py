"""Writing results in batches as cases finish."""

from __future__ import annotations

import time
from collections.abc import Callable

from ..core import CaseResult
from ._rows import SqliteRows
from ._store import Store


class ResultWriter:
    """Buffers results and writes them in batches: when ``batch_size`` are waiting or
    ``max_delay_s`` has passed since the last write, and always on :meth:`flush`.

    Writing happens on the calling thread: a background writer was measured slower, because
    the driver's GIL hand-offs stall it behind the scoring thread. A batch that fails to write
    stays queued (and :meth:`flush` raises), so nothing finished is dropped silently.
    """

    def __init__(
        self,
        store: Store,
        run_id: str,
        *,
        batch_size: int = 500,
        max_delay_s: float = 0.5,
        on_written: Callable[[list[CaseResult]], None] | None = None,
    ) -> None:
        """``on_written`` gets each batch once it is committed (a run's summary counts only
        what the store holds)."""
        self.store = store
        self.on_written = on_written
        self.run_id = run_id
        self.batch_size = batch_size
        self.max_delay_s = max_delay_s
        self.written = 0
        """Results stored so far (counted once their transaction committed)."""
        self._buffer: list[CaseResult] = []
        self._last = time.monotonic()
        self._beat = self._last

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:  # on an error the caller flushes and reports what was kept
            self.flush()

    @property
    def pending(self) -> int:
        """Results queued but not stored (a failed batch stays here)."""
        return len(self._buffer)

    def add(self, result: CaseResult) -> None:
        """Queue one result; write the batch if it is due.

        Raises:
            StoreError: the batch could not be written; it stays queued.
        """
        self._buffer.append(result)
        if len(self._buffer) >= self.batch_size or (
            time.monotonic() - self._last >= self.max_delay_s
        ):
            self.flush()

    def add_rows(self, results: list[CaseResult], rows: SqliteRows) -> None:
        """Store ``results``, which a worker process already built into ``rows`` (see
        :meth:`Store.add_rows`), in one transaction after whatever is queued.

        Raises:
            StoreError: they could not be written; they stay queued (as results).
        """
        self.flush()
        try:
            self.store.add_rows(rows)
        except BaseException:
            self._buffer.extend(results)
            raise
        self._written(results)

    def stored_elsewhere(self, count: int) -> None:
        """Count ``count`` results that worker processes stored themselves (committed), after
        whatever is queued."""
        self.flush()
        self.written += count
        self._beat_now()

    def flush(self) -> None:
        """Write everything queued.

        Raises:
            StoreError: the batch could not be written; it stays queued.
        """
        if self._buffer:
            batch, self._buffer = self._buffer, []
            try:
                self.store.add_results(self.run_id, batch)
            except BaseException:
                self._buffer = batch + self._buffer
                raise
            self._written(batch)
        else:
            self._beat_now()

    def _written(self, batch: list[CaseResult]) -> None:
        self.written += len(batch)
        if self.on_written is not None:
            self.on_written(batch)
        self._beat_now()

    def _beat_now(self) -> None:
        self._last = time.monotonic()
        if self._last - self._beat >= HEARTBEAT_S:
            self._beat = self._last
            self.store.heartbeat(self.run_id)


HEARTBEAT_S = 30.0
"""How often, at most, the writer notes in the run's row that its process is alive."""
