"""Importing agent logs: records per second and peak memory, for OTLP spans and OpenAI logs.

Usage: python benchmarks/bench_import.py [--spans N] [--conversations N] [--runs R]

Writes two logs from the same airline support conversations:
- OTLP/JSON as the OpenTelemetry Collector's file exporter writes it: one request a line,
  each trace ~10 spans (an ``invoke_agent`` root, chat spans carrying ``gen_ai.input.messages``
  / ``gen_ai.output.messages`` and token usage, ``execute_tool`` spans with arguments and
  results, one of them errored); N spans in all;
- OpenAI Chat Completions message lists, one conversation a line (system, user, assistant
  with ``tool_calls`` whose arguments are JSON text, ``tool`` results paired by id); N lists.
Each import runs in its own process through the importer and writes checkweigh's JSONL, as
``checkweigh import FORMAT FILE --out cases.jsonl`` does. Records are spans for OTLP and
message lists for OpenAI. Memory is measured on the full input and on a quarter of it: the
two peaks should be the same (memory flat in input size).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _phase import in_child, peak_rss_mb  # the benchmarks' own helper module

BASE_NS = 1_763_900_000_000_000_000


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        typed: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        typed = {"intValue": str(value)}
    elif isinstance(value, float):
        typed = {"doubleValue": value}
    else:
        typed = {"stringValue": value if isinstance(value, str) else json.dumps(value)}
    return {"key": key, "value": typed}


def _span(
    trace: str,
    span: str,
    parent: str | None,
    name: str,
    start_ms: int,
    end_ms: int,
    attrs: dict[str, Any],
    error: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": trace,
        "spanId": span,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(BASE_NS + start_ms * 1_000_000),
        "endTimeUnixNano": str(BASE_NS + end_ms * 1_000_000),
        "attributes": [_attr(k, v) for k, v in attrs.items()],
        "status": {"code": 2, "message": error} if error else {},
    }
    if parent:
        out["parentSpanId"] = parent
    return out


def _tool_calls(i: int) -> list[tuple[str, dict[str, Any], Any, str | None]]:
    user, res = f"user_{i:06d}", f"R{i:05d}X"
    return [
        (
            "get_user_details",
            {"user_id": user},
            {"user_id": user, "membership": "gold", "reservations": [res, f"R{i + 1:05d}X"]},
            None,
        ),
        (
            "get_reservation_details",
            {"reservation_id": res},
            {
                "reservation_id": res,
                "origin": "JFK",
                "destination": "SEA",
                "cabin": "economy",
                "flights": [{"flight_number": "HAT136", "date": "2024-05-20", "price": 238}],
            },
            None,
        ),
        (
            "search_direct_flight",
            {"origin": "JFK", "destination": "SEA", "date": "2024-05-21"},
            [
                {"flight_number": f"HAT{k:03d}", "date": "2024-05-21", "price": 200 + k}
                for k in range(6)
            ],
            None,
        ),
        (
            "update_reservation_flights",
            {
                "reservation_id": res,
                "cabin": "economy",
                "flights": [{"flight_number": "HAT002", "date": "2024-05-21"}],
                "payment_id": "credit_card_9",
            },
            None,
            "payment method not found",
        ),
        (
            "update_reservation_flights",
            {
                "reservation_id": res,
                "cabin": "economy",
                "flights": [{"flight_number": "HAT002", "date": "2024-05-21"}],
                "payment_id": "credit_card_1",
            },
            {"reservation_id": res, "status": "updated"},
            None,
        ),
    ]


def otlp_trace(i: int) -> dict[str, Any]:
    """One request holding one trace of 10 spans."""
    trace, root = f"{i + 1:032x}", f"{i + 1:012x}0000"
    calls = _tool_calls(i)
    spans = [
        _span(
            trace,
            root,
            None,
            "invoke_agent airline",
            0,
            9000,
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "airline"},
        )
    ]
    history: list[dict[str, Any]] = [
        {
            "role": "user",
            "parts": [
                {"type": "text", "content": f"Please move reservation R{i:05d}X to the 21st."}
            ],
        }
    ]
    t = 10
    for k in range(4):  # four chat turns, the tool calls between them
        chat_id = f"{i + 1:012x}{k + 1:04x}"
        mine = calls[k : k + 2] if k == 3 else calls[k : k + 1]
        out = [
            {
                "role": "assistant",
                "parts": [
                    {"type": "tool_call", "id": f"call_{i}_{k}_{j}", "name": n, "arguments": a}
                    for j, (n, a, _, _) in enumerate(mine)
                ],
            }
        ]
        spans.append(
            _span(
                trace,
                chat_id,
                root,
                "chat gpt-4o",
                t,
                t + 700,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.usage.input_tokens": 900 + 150 * k,
                    "gen_ai.usage.output_tokens": 40,
                    "gen_ai.input.messages": json.dumps(history),
                    "gen_ai.output.messages": json.dumps(out),
                },
            )
        )
        t += 710
        for j, (name, args, result, error) in enumerate(mine):
            tool_id = f"{i + 1:012x}{k + 1:02x}{j + 10:02x}"
            attrs: dict[str, Any] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": f"call_{i}_{k}_{j}",
                "gen_ai.tool.call.arguments": json.dumps(args),
            }
            if result is not None:
                attrs["gen_ai.tool.call.result"] = json.dumps(result)
            spans.append(
                _span(trace, tool_id, chat_id, f"execute_tool {name}", t, t + 80, attrs, error)
            )
            t += 90
        history = [
            *history,
            *out,
            *[
                {
                    "role": "tool",
                    "parts": [
                        {
                            "type": "tool_call_response",
                            "id": f"call_{i}_{k}_{j}",
                            "response": r or {"error": e},
                        }
                    ],
                }
                for j, (_, _, r, e) in enumerate(mine)
            ],
        ]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", "airline-agent")]},
                "scopeSpans": [
                    {"scope": {"name": "opentelemetry.instrumentation.openai_v2"}, "spans": spans}
                ],
            }
        ]
    }


def openai_messages(i: int) -> dict[str, Any]:
    """One conversation as an OpenAI Chat Completions message list."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an airline agent. Follow the policy."},
        {"role": "user", "content": f"Please move reservation R{i:05d}X to the 21st."},
    ]
    for k, (name, args, result, error) in enumerate(_tool_calls(i)):
        call = f"call_{i}_{k}"
        messages.append(
            {
                "role": "assistant",
                "content": "Let me check." if k == 0 else None,
                "tool_calls": [
                    {
                        "id": call,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        messages.append(
            {
                "role": "tool",
                "tool_call_id": call,
                "content": json.dumps(result) if result else f"Error: {error}",
            }
        )
    messages.append({"role": "assistant", "content": f"Done: R{i:05d}X now flies HAT002."})
    return {"id": f"conv-{i:06d}", "messages": messages}


def write_logs(folder: Path, spans: int, conversations: int) -> dict[str, tuple[Path, int]]:
    otlp, chat = folder / "spans.jsonl", folder / "chat.jsonl"
    with otlp.open("w", encoding="utf-8") as fh:
        for i in range(spans // 10):
            fh.write(json.dumps(otlp_trace(i), separators=(",", ":")) + "\n")
    with chat.open("w", encoding="utf-8") as fh:
        for i in range(conversations):
            fh.write(json.dumps(openai_messages(i), separators=(",", ":")) + "\n")
    return {"otel": (otlp, spans // 10 * 10), "openai": (chat, conversations)}


def phase(fmt: str, path: Path, out: Path | None, limit: int | None) -> dict[str, float]:
    """Import ``path`` as ``fmt``, writing checkweigh JSONL to ``out`` (None: only read the
    cases, as a suite that reads the logs directly does)."""
    from checkweigh.importers import ImportContext, get_format, import_lines

    source = path
    if limit is not None:  # the first lines only: the memory-flatness comparison
        source = path.with_name(f"part-{path.name}")
        with path.open(encoding="utf-8") as src, source.open("w", encoding="utf-8") as dst:
            for n, line in enumerate(src):
                if n >= limit:
                    break
                dst.write(line)
    ctx = ImportContext(on_bad_record="fail")
    start = time.perf_counter()
    n = 0
    if out is None:
        n = sum(1 for _ in get_format(fmt).cases(source, ctx))
    else:
        with out.open("wb") as fh:  # as checkweigh import writes it
            for line in import_lines(get_format(fmt), [source], ctx):
                fh.write(line)
                n += 1
    elapsed = time.perf_counter() - start
    return {
        "cases": n,
        "records": ctx.records,
        "seconds": elapsed,
        "peak_rss_mb": peak_rss_mb(),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spans", type=int, default=100_000)
    p.add_argument("--conversations", type=int, default=100_000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--phase", choices=["otel", "openai"])
    p.add_argument("--file", type=Path)
    p.add_argument("--out", type=Path, help="without it, the cases are read, not written")
    p.add_argument("--limit", type=int)
    a = p.parse_args()
    if a.phase:
        print(json.dumps(phase(a.phase, a.file, a.out, a.limit)))
        return
    with tempfile.TemporaryDirectory(prefix="checkweigh-bench-") as tmp:
        logs = write_logs(Path(tmp), a.spans, a.conversations)
        for fmt, (path, records) in logs.items():
            if not records:
                continue
            unit = "spans" if fmt == "otel" else "message lists"
            size = path.stat().st_size
            common = ["--phase", fmt, "--file", str(path), "--out", str(Path(tmp) / "out.jsonl")]
            runs = [in_child(__file__, common) for _ in range(a.runs)]
            reads = [
                in_child(__file__, ["--phase", fmt, "--file", str(path)]) for _ in range(a.runs)
            ]
            lines = records // 10 if fmt == "otel" else records
            quarter = in_child(__file__, [*common, "--limit", str(lines // 4)])
            per = 10 if fmt == "otel" else 1
            rates = sorted(r["records"] / r["seconds"] * per for r in runs)
            read = statistics.median(r["records"] / r["seconds"] * per for r in reads)
            print(
                f"{fmt:<7} {records:,} {unit} ({size / 1e6:.0f} MB, {runs[0]['cases']:,.0f} "
                f"cases): import to JSONL {statistics.median(rates):,.0f} {unit}/s (runs "
                f"{rates[0]:,.0f} .. {rates[-1]:,.0f}); read as cases {read:,.0f}/s; "
                "bar >= 20,000"
            )
            print(
                f"{'':<7} peak RSS {max(r['peak_rss_mb'] for r in runs):.0f} MB on the whole "
                f"file, {quarter['peak_rss_mb']:.0f} MB on a quarter of it"
            )


if __name__ == "__main__":
    main()
