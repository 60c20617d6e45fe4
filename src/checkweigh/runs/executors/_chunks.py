"""The driver's side of chunked work: cut the cases into chunks, keep a bounded number in
flight on the workers, and hand their results on in the cases' order.

For a checkweigh JSONL file the driver only reads lines (the workers parse them); other
sources (imported logs, YAML, a caller's cases) are read here and shipped as cases.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from functools import partial
from pathlib import Path

from ...checks import PathWatch
from ...core import Case
from ...errors import CaseFileError
from ...suites import UniqueIds, id_of_case, is_blank, numbered_lines, shown
from .._engine import Sourced
from .._gc import collector_paused, older_objects_frozen
from .._stop import Interrupted, StopToken
from ._base import Sink, Work
from ._blocks import Block
from ._blocks import blocks as cut_blocks
from ._worker import Chunk, Scored, Stored

POLL_S = 0.25
"""How often the driver looks at the stop flag while it waits for a chunk."""


def chunks_of(
    work: Work, size: int, *, blocks: bool = False, cut: Iterable[tuple[Block, int]] | None = None
) -> Iterator[Chunk]:
    """``work``'s cases in chunks of ``size`` cases (fewer at the end), in order; with
    ``blocks``, a JSONL file's as byte ranges that the workers read (on this machine), ``cut``
    when the file was cut into them already."""
    source = work.source
    if source is not None and source.streamed:
        if blocks:
            return _block_chunks(work.repeat, cut or cut_blocks(source.path, size))
        return _line_chunks(source.path, work.repeat, size)
    return _case_chunks(work.cases, work.repeat, size)


def _block_chunks(repeat: int, cut: Iterable[tuple[Block, int]]) -> Iterator[Chunk]:
    first = 0
    for block, count in cut:
        yield Chunk(first, repeat, block=block, block_cases=count)
        first += count


def _line_chunks(path: Path, repeat: int, size: int) -> Iterator[Chunk]:
    lines = ((n, raw) for n, raw in numbered_lines(path) if not is_blank(raw))
    first = 0
    while batch := tuple(itertools.islice(lines, size)):
        yield Chunk(first, repeat, lines=batch)
        first += len(batch)


def _case_chunks(
    cases: Iterable[Case] | Iterable[Sourced], repeat: int, size: int
) -> Iterator[Chunk]:
    items = (item if type(item) is tuple else (item, None) for item in cases)
    first = 0
    while batch := tuple(itertools.islice(items, size)):
        yield Chunk(first, repeat, cases=batch)  # type: ignore[arg-type]
        first += len(batch)


Submit = Callable[[Chunk], Awaitable[Scored | Stored]]

STOP_GRACE_S = 5.0
"""On a stop, how long the chunks in flight get to hand back the cases they finished (a
worker asked to halt ends its chunk before the next case); a worker still busy then, in one
case that long, is stopped with nothing of its chunk kept."""


async def stream(
    submit: Submit,
    chunks: Iterator[Chunk],
    *,
    window: int,
    sink: Sink,
    stop: StopToken | None,
    path: Path | None,
    halt: Callable[[], None] | None = None,
    watch: PathWatch | None = None,
) -> None:
    """Keep ``window`` chunks in flight through ``submit`` and hand their results to
    ``sink`` chunk by chunk, in the cases' order (so the store and the report read as an
    in-process run's): scored results with their rows when the chunk built them, stored
    chunks as their aggregates. ``path`` is the JSONL file whose ids are checked unique here (the
    workers see one chunk each).

    An error reading the cases, or a bad case a worker met, is raised once the results before
    it were handed on, as an in-process run does.

    On a stop, ``halt`` (when given) asks the workers to end their chunks before their next
    case: the chunks in flight then hand on, in order, the cases they finished, for up to
    :data:`STOP_GRACE_S`; without it they are dropped. ``watch`` (the driver's) learns which
    case paths each chunk handed on held.

    Raises:
        Interrupted: ``stop`` was requested.
    """
    token = stop if stop is not None else StopToken()
    on_stored = sink.add_stored if watch is None else _watching(sink.add_stored, watch)
    pending: deque[tuple[Chunk, asyncio.Future[Scored | Stored]]] = deque()
    failed: list[BaseException] = []
    # the file's ids as hashes, confirmed by reading the case again (see UniqueIds)
    seen = UniqueIds(partial(id_of_case, path) if path is not None else _no_case)

    def fill() -> None:
        while not failed and len(pending) < window and not token.requested:
            try:
                chunk = next(chunks)
            except StopIteration:
                return
            except Exception as exc:  # noqa: BLE001 - raised once the chunks before it are in
                failed.append(exc)
                return
            pending.append((chunk, asyncio.ensure_future(submit(chunk))))

    def hand_on(scored: Scored) -> None:
        if watch is not None:
            watch.absorb(scored.watched)
        if scored.rows is not None:
            sink.add_rows(scored.results, scored.rows)
        else:
            for result in scored.results:
                sink.add(result)

    async def wind_down() -> None:
        """The chunks in flight, asked to halt, handed on in order up to the first that ended
        short (halted), met an error or outlived the grace: the run keeps a prefix."""
        assert halt is not None
        halt()
        deadline = asyncio.get_running_loop().time() + STOP_GRACE_S
        while pending:
            chunk, running = pending.popleft()
            left = deadline - asyncio.get_running_loop().time()
            await asyncio.wait({running}, timeout=max(left, 0))
            if not running.done() or running.cancelled() or running.exception() is not None:
                return
            done = running.result()
            if done.error is not None:  # a bad case: the stop answers first, and keeps less
                return
            if isinstance(done, Stored):
                ran = len(done.case_ids)
                if path is not None and (chunk.lines or chunk.block):
                    if _repeated(done.case_ids, 1, chunk, seen, path)[1] is not None:
                        return
                    done = done._replace(new_ids=True)
                on_stored(done)
            else:
                ran = len(done.results)
                if path is not None and _unique(done, chunk, seen, path).error is not None:
                    return
                hand_on(done)
            if ran < len(chunk) * chunk.repeat:  # halted: what follows is not a prefix
                return

    # as the engine's own loop (see checkweigh.runs._gc); the driver keeps none of what it
    # unpickles, so the collector has nothing to find in it
    with older_objects_frozen(), collector_paused():
        try:
            fill()
            while pending:
                chunk, running = pending[0]
                while not running.done():
                    if token.requested:
                        if halt is not None:
                            await wind_down()
                        raise Interrupted(token.reason)
                    await asyncio.wait({running}, timeout=POLL_S)
                pending.popleft()
                done = running.result()
                if isinstance(done, Stored):
                    await _account(done, chunk, submit, on_stored, seen, path)
                    fill()
                    continue
                scored = done
                if path is not None:
                    scored = _unique(scored, chunk, seen, path)
                hand_on(scored)
                if scored.error is not None:
                    raise scored.error
                fill()
            if failed:
                raise failed[0]
            token.raise_if_requested()
        finally:
            for _, running in pending:
                running.cancel()


async def _account(
    stored: Stored,
    chunk: Chunk,
    submit: Submit,
    on_stored: Callable[[Stored], None],
    seen: UniqueIds,
    path: Path | None,
) -> None:
    """Hand ``stored`` on, cut at its first repeated case id (then raised, as the error that
    ended it early is)."""
    error = stored.error
    if path is not None and (chunk.lines or chunk.block):
        cut, repeated = _repeated(stored.case_ids, 1, chunk, seen, path)
        if repeated is not None:
            error = repeated
            if not cut:
                raise error
            # the worker stored past the repeated id: the cases before it, stored again in
            # place of the chunk, are what the run keeps
            again = await submit(chunk.retried(path, cut))
            assert isinstance(again, Stored)
            stored = again
        stored = stored._replace(new_ids=True)
    on_stored(stored)
    if error is not None:
        raise error


def _watching(on_stored: Callable[[Stored], None], watch: PathWatch) -> Callable[[Stored], None]:
    """``on_stored``, after ``watch`` absorbed what the stored chunk's cases held."""

    def stored(done: Stored) -> None:
        watch.absorb(done.watched)
        on_stored(done)

    return stored


def _unique(scored: Scored, chunk: Chunk, seen: UniqueIds, path: Path) -> Scored:
    """``scored`` cut at the first case whose id came before, with that error."""
    if not chunk.lines and chunk.block is None:  # cases the driver read: their reader checked them
        return scored
    ids = [r.case_id for r in scored.results]
    cut, error = _repeated(ids, chunk.repeat, chunk, seen, path)
    if error is None:
        return scored
    # the rows were made for the whole chunk: the results kept are handed on one by one
    return Scored(scored.results[:cut], error, watched=scored.watched)


def _repeated(
    case_ids: list[str], repeat: int, chunk: Chunk, seen: UniqueIds, path: Path
) -> tuple[int, CaseFileError | None]:
    """Where ``case_ids`` (of ``chunk``'s executions, ``repeat`` per case) meet the first id
    that came before, with that error; (len, None) when none did. Notes the others in
    ``seen``."""
    cases = case_ids[::repeat] if repeat > 1 else case_ids
    repeated = seen.first_repeated(cases, chunk.first)
    if repeated is None:
        return len(case_ids), None
    i = repeated[0]
    lineno = chunk.numbered(path)[i][0]
    error = CaseFileError(
        f"duplicate case id {shown(cases[i])}", file=path, line=lineno, field="id"
    )
    return i * repeat, error


def _no_case(_index: int) -> None:
    return None
