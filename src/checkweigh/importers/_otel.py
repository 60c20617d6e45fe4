"""OpenTelemetry GenAI spans (OTLP/JSON, as the Collector's file exporter writes them) as cases.

One trace is one case. Its id is the ``checkweigh.case.id`` attribute (or the attribute named
by ``case_id_attribute``) found on the resource or on a span, else the trace id. Spans are
ordered by start time (parents before children at the same instant), whatever their order in
the file, and a trace's spans may be spread over many lines.

Memory grows with the traces still open, not with the file: a trace is emitted once its root
span (the one with no parent) has been seen and none of its spans came for
``flush_after_lines`` records; the rest are emitted when the file ends. A span arriving after
its trace was emitted is a bad record (raise ``flush_after_lines`` for such files); the ids of
emitted traces are kept to tell.

A trace with no GenAI span (a health check, a plain HTTP request) makes no case.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ..core import Case
from ._base import ImportContext, iter_records
from ._otel_steps import build_case
from ._otlp import Span, SpanError, request_spans

DEFAULT_FLUSH_AFTER = 10_000


@dataclass(slots=True)
class _Trace:
    spans: list[Span] = field(default_factory=list)
    rooted: bool = False
    last_seen: int = 0
    first_line: int | None = None


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
        """
        self.case_id_attribute = case_id_attribute
        self.flush_after_lines = flush_after_lines

    def cases(self, path: Path, ctx: ImportContext) -> Iterator[Case]:
        """One case per trace; bad records and bad spans go to ``ctx.bad``."""
        open_traces: OrderedDict[str, _Trace] = OrderedDict()
        emitted: set[str] = set()
        n = 0
        for line, record in iter_records(path, ctx):
            n += 1
            try:
                items = list(request_spans(record, line))
            except SpanError as exc:
                ctx.bad(path, line, str(exc))
                continue
            for item in items:
                if isinstance(item, SpanError):
                    ctx.bad(path, line, str(item))
                    continue
                if item.trace_id in emitted:
                    ctx.bad(
                        path,
                        line,
                        f"span {item.span_id} of trace {item.trace_id} came more than "
                        f"{self.flush_after_lines} records after the trace's last span, once "
                        "its case was made; raise flush_after_lines",
                    )
                    continue
                trace = open_traces.get(item.trace_id)
                if trace is None:
                    trace = open_traces[item.trace_id] = _Trace(first_line=line)
                else:
                    open_traces.move_to_end(item.trace_id)
                trace.spans.append(item)
                trace.rooted = trace.rooted or item.parent_id is None
                trace.last_seen = n
            for trace_id in self._stale(open_traces, n):
                emitted.add(trace_id)
                yield from self._case(path, ctx, trace_id, open_traces.pop(trace_id))
        for trace_id, trace in open_traces.items():
            yield from self._case(path, ctx, trace_id, trace)

    def _stale(self, open_traces: OrderedDict[str, _Trace], n: int) -> list[str]:
        # least recently seen first: stop at the first trace still within the window
        done = []
        for trace_id, trace in open_traces.items():
            if n - trace.last_seen < self.flush_after_lines:
                break
            if trace.rooted:
                done.append(trace_id)
        return done

    def _case(self, path: Path, ctx: ImportContext, trace_id: str, trace: _Trace) -> Iterator[Case]:
        try:
            case = build_case(trace_id, trace.spans, self.case_id_attribute)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            ctx.bad(path, trace.first_line, f"trace {trace_id}: {where}: {err['msg']}")
            return
        if not case.trace:
            return  # no GenAI span: a health check or a plain request, not an agent's run
        ctx.cases += 1
        yield case
