"""OpenTelemetry GenAI spans (OTLP/JSON, as the Collector's file exporter writes them) as cases.

A record is a traces export request, or a logs one whose GenAI log events (message content,
on the official OpenAI instrumentation's default conventions) join the spans of their trace.

One trace is one case. Its id is the ``checkweigh.case.id`` attribute (or the attribute named
by ``case_id_attribute``) found on the resource or on a span, else the trace id. Spans are
ordered by start time (parents before children at the same instant), whatever their order in
the file, and a trace's spans may be spread over many lines.

Memory grows with the traces still open, not with the file: a trace is emitted once its root
span (the one with no parent) has been seen and none of its spans came for
``flush_after_lines`` records; the rest are emitted when the file ends. A span arriving after
its trace was emitted is a bad record (raise ``flush_after_lines`` for such files); the ids of
emitted traces are kept to tell.

A trace with no GenAI span (a health check, a plain HTTP request) makes no case; the import
says how many there were.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import Case
from ._base import ImportContext, iter_records
from ._otel_steps import NO_CONTENT, build_case
from ._otlp import Span, SpanError, request_spans
from ._otlp_logs import LogEvent, request_logs
from ._reply import Reply, ReplyError

DEFAULT_FLUSH_AFTER = 1_000
"""Records after which a rooted trace with no new span is complete. A root span ends last,
so SDKs export it with or after its children: 1,000 records is a wide margin, and keeps
memory flat (10,000 held every trace of a 100,000-span file)."""


@dataclass(slots=True)
class _Trace:
    order: int
    """Which trace of the file this is, by its first span: the order of the cases at the end."""
    first_line: int | None
    spans: list[Span] = field(default_factory=list)
    logs: list[LogEvent] = field(default_factory=list)
    """The GenAI log events that name the trace (message content, on some conventions)."""
    rooted: bool = False
    last_seen: int = 0


class _OpenTraces:
    """The traces still open, least recently seen first, and the ids of those emitted."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.n = 0
        """Records read so far."""
        self.recent: OrderedDict[str, _Trace] = OrderedDict()
        self.rootless: dict[str, _Trace] = {}
        """Traces quiet for a window but with no root span yet: only the file's end (or a late
        span) completes them; set aside so each record does not look at them again."""
        self.emitted: set[str] = set()
        self._count = 0

    def add(self, item: Span | LogEvent, line: int | None) -> bool:
        """Add a span or a log event to its trace; False when the trace was already emitted."""
        trace_id = item.trace_id
        if trace_id in self.emitted:
            return False
        trace = self.recent.get(trace_id)
        if trace is not None:
            self.recent.move_to_end(trace_id)
        else:
            trace = self.rootless.pop(trace_id, None)
            if trace is None:
                trace = _Trace(order=self._count, first_line=line)
                self._count += 1
            self.recent[trace_id] = trace
        if isinstance(item, LogEvent):
            trace.logs.append(item)
        else:
            trace.spans.append(item)
            trace.rooted = trace.rooted or item.parent_id is None
        trace.last_seen = self.n
        return True

    def complete(self) -> list[tuple[str, _Trace]]:
        """The traces whose root was seen and that had no span for a window, now closed."""
        done = []
        while self.recent:
            trace_id, trace = next(iter(self.recent.items()))
            if self.n - trace.last_seen < self.window:
                break
            del self.recent[trace_id]
            if trace.rooted:
                self.emitted.add(trace_id)
                done.append((trace_id, trace))
            else:
                self.rootless[trace_id] = trace
        return done

    def rest(self) -> list[tuple[str, _Trace]]:
        """Every trace still open, in the order they began in the file."""
        left = [*self.recent.items(), *self.rootless.items()]
        return sorted(left, key=lambda item: item[1].order)


class OtelFormat:
    """``otel``: OTLP/JSON export requests, one a line (or one JSON document)."""

    name = "otel"

    def __init__(
        self,
        *,
        case_id_attribute: str = "checkweigh.case.id",
        flush_after_lines: int = DEFAULT_FLUSH_AFTER,
    ) -> None:
        """Args:
        case_id_attribute: the resource or span attribute that holds the case id.
        flush_after_lines: records after which a rooted trace with no new span is complete.

        Raises:
            ValueError: an option of the wrong type or range (options come from suite files).
        """
        if not isinstance(case_id_attribute, str) or not case_id_attribute:
            raise ValueError(
                f"case_id_attribute: expected an attribute name, got {case_id_attribute!r}"
            )
        if type(flush_after_lines) is not int or flush_after_lines < 1:
            raise ValueError(
                f"flush_after_lines: expected a whole number >= 1, got {flush_after_lines!r}"
            )
        self.case_id_attribute = case_id_attribute
        self.flush_after_lines = flush_after_lines

    reply_input = "json"

    def read_reply(self, data: Any) -> Reply:
        """An agent's reply that is an OTLP/JSON export request holding the spans of one trace.

        Raises:
            ReplyError: not such a request, a bad span, or the spans of several traces.
        """
        try:
            items = list(request_spans(data, None))
        except SpanError as exc:
            raise ReplyError(str(exc)) from None
        spans: list[Span] = []
        for item in items:
            if isinstance(item, SpanError):
                raise ReplyError(str(item))
            spans.append(item)
        traces = {s.trace_id for s in spans}
        if len(traces) != 1:
            raise ReplyError(f"expected the spans of one trace, got {len(traces)} traces")
        try:
            case = build_case(traces.pop(), spans, self.case_id_attribute)
        except SpanError as exc:
            raise ReplyError(str(exc)) from None
        return Reply(list(case.trace), case.final_state)

    def cases(self, path: Path, ctx: ImportContext) -> Iterator[Case]:
        """One case per trace; bad records and bad spans go to ``ctx.bad``."""
        traces = _OpenTraces(self.flush_after_lines)
        for line, record in iter_records(path, ctx):
            traces.n += 1
            try:
                items = [*request_spans(record, line), *request_logs(record, line)]
            except SpanError as exc:
                ctx.bad(path, line, str(exc))
                continue
            for item in items:
                if isinstance(item, SpanError):
                    ctx.bad(path, line, str(item))
                elif not traces.add(item, line):
                    what = f"span {item.span_id}" if isinstance(item, Span) else "a log event"
                    ctx.bad(
                        path,
                        line,
                        f"{what} of trace {item.trace_id} came more than "
                        f"{self.flush_after_lines} records after the trace's last span, once "
                        "its case was made; raise flush_after_lines",
                    )
            for trace_id, trace in traces.complete():
                yield from self._case(path, ctx, trace_id, trace)
        for trace_id, trace in traces.rest():
            yield from self._case(path, ctx, trace_id, trace)

    def _case(self, path: Path, ctx: ImportContext, trace_id: str, trace: _Trace) -> Iterator[Case]:
        if not trace.spans:  # its spans were exported elsewhere
            ctx.no_case("trace(s) with GenAI log events but no span in the same file")
            return
        try:
            case = build_case(trace_id, trace.spans, self.case_id_attribute, trace.logs)
        except SpanError as exc:
            ctx.bad(path, trace.first_line, f"trace {trace_id}: {exc}")
            return
        if not case.trace:  # a health check or a plain request, not an agent's run
            ctx.no_case("trace(s) without a GenAI span")
            return
        if case.error == NO_CONTENT:
            ctx.warn(path, trace.first_line, f"trace {trace_id}: {NO_CONTENT}; an errored case")
        if ctx.accept(case, path, trace.first_line, label=f"trace {trace_id}: "):
            yield case
