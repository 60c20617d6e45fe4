"""Live scoring under load: one ``checkweigh serve`` process receiving GenAI agent traces over
OTLP/HTTP from the real OpenTelemetry SDK and exporter, and scoring them with a monitor.

Usage: python benchmarks/bench_live.py [--rate SPANS_PER_S] [--seconds S] [--senders N]
       [--servers N] [--db URL] [--quiet-window S] [--profile FILE]

Starts ``checkweigh serve --monitor`` as a subprocess on a fresh SQLite file (or on ``--db``, a
PostgreSQL URL whose database should be empty), and ``--senders`` processes that each make a
booking agent's traces with the OpenTelemetry SDK (``tests/support/otel_agent.py``: a root
``invoke_agent`` span, ``chat`` spans with GenAI messages and token usage, ``execute_tool``
spans; 8 to 12 spans a trace) at their share of ``--rate`` spans per second for
``--seconds``, exported by the SDK's BatchSpanProcessor through ``OTLPSpanExporter``
(http/protobuf). The exporter is a thin subclass timing each ``export`` call: the ingest
latency is the HTTP export as the exporter sees it (retries included), per batch.

Printed: spans made, acknowledged (exports that succeeded) and stored (the store's count), the
traces scored against the traces sent (each trace's results counted in the window runs: none
lost, none scored twice), p50/p95/p99 ingest latency, the server's resident memory over time
(from /proc: peak and end), and the time from the last span sent to the last trace scored
(the quiet window included: a trace is complete once no span came for that long). No
assertion on time: the figures go in docs/performance.md. With ``--profile FILE`` the server
runs under cProfile and writes its statistics to FILE when it stops. With ``--servers N``,
N serve processes share the database (PostgreSQL: the work queue's SKIP LOCKED claims), sender
k sending to server k mod N; their memory and CPU are summed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the traces the tests send, made the same way

TOKEN = secrets.token_urlsafe(24)
"""The server's token (made in the main process: a spawned sender is given it)."""


PROFILED = """\
import cProfile, pstats, signal, threading
profiles = [cProfile.Profile()]
def start(*_):
    p = cProfile.Profile()
    profiles.append(p)
    p.enable()
def dump(*_):
    pstats.Stats(*profiles).dump_stats({out!r})
threading.setprofile(start)
signal.signal(signal.SIGUSR1, dump)
from checkweigh.cli import main
profiles[0].enable()
main()
"""
"""The server's entry under ``--profile``: a profiler per thread (the scorer and the store's
calls run on threads), their statistics merged into the file on SIGUSR1 (the CLI ends the
process at once on SIGTERM)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_s(pid: int) -> float:
    """A process's CPU time so far (user + system, seconds), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    """A process's resident memory (MiB), from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def sender(
    k: int, senders: int, port: int, token: str, rate: float, seconds: float, out: Any
) -> None:
    """Sender ``k``: traces k, k+senders, ... at ``rate`` spans/s for ``seconds``; puts its
    figures on ``out``."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    from support.otel_agent import emit_trace, provider, spans_of

    timings: list[float] = []
    acked = [0, 0]  # spans acknowledged, spans whose export failed

    class TimedExporter(OTLPSpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            began = time.perf_counter()
            result = super().export(spans)
            timings.append(time.perf_counter() - began)
            acked[0 if result is SpanExportResult.SUCCESS else 1] += len(spans)
            return result

    exporter = TimedExporter(
        endpoint=f"http://127.0.0.1:{port}/v1/traces",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    made = provider(exporter, queue=65536, delay_ms=200)
    tracer = made.get_tracer("bench_live")
    began = time.monotonic()
    sent, n, ids = 0, k, []
    while time.monotonic() - began < seconds:
        due = began + sent / rate
        if (wait := due - time.monotonic()) > 0:
            time.sleep(wait)
        ids.append(emit_trace([tracer], n, time.time_ns()))
        sent += spans_of(n)
        n += senders
    ended = time.time()
    made.force_flush(60_000)
    made.shutdown()
    out.put(
        {
            "ids": ids,
            "made": sent,
            "acked": acked[0],
            "failed": acked[1],
            "timings": timings,
            "span": (ended - (time.monotonic() - began), ended),
            "cpu_s": time.process_time(),
        }
    )


def count(url: str) -> dict[str, Any]:
    """What the store holds: spans, traces by state, results per trace in the window runs."""
    from sqlalchemy import text

    from checkweigh.store import Store

    store = Store(url)
    with store.engine.connect() as conn:
        spans = conn.execute(
            text("select coalesce(sum(spans + late), 0) from live_traces")
        ).scalar_one()
        states = dict(
            conn.execute(text("select state, count(*) from live_traces group by 1")).all()
        )
        per_trace = conn.execute(
            text("select case_id, count(*) from case_results where run_id like 'mon-%' group by 1")
        ).all()
    store.engine.dispose()
    return {"spans": int(spans), "states": states, "results": dict(per_trace)}


def done_count(url: str) -> int:
    from sqlalchemy import text

    from checkweigh.store import Store

    store = Store(url)
    with store.engine.connect() as conn:
        done = conn.execute(text("select count(*) from live_traces where state = 'done'"))
        n = int(done.scalar_one())
    store.engine.dispose()
    return n


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=1000.0, help="spans per second in all")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--senders", type=int, default=2)
    parser.add_argument("--servers", type=int, default=1, help="serve processes over one --db")
    parser.add_argument("--db", default=None, help="a PostgreSQL URL (default: SQLite)")
    parser.add_argument("--quiet-window", type=float, default=2.0)
    parser.add_argument("--profile", default=None, help="cProfile the server into this file")
    a = parser.parse_args()
    from support.otel_agent import monitor_text, suite_text

    with tempfile.TemporaryDirectory(prefix="bench_live_") as tmp:
        folder = Path(tmp)
        (folder / "suite.yaml").write_text(suite_text(), encoding="utf-8")
        (folder / "monitor.yaml").write_text(monitor_text(), encoding="utf-8")
        url = a.db or f"sqlite:///{folder / 'live.db'}"
        entry = "from checkweigh.cli import main; main()"
        if a.profile:  # every thread profiled: the scorer and the store's calls run on threads
            entry = PROFILED.format(out=a.profile)
        servers: dict[int, subprocess.Popen[bytes]] = {}
        log = folder / "serve.log"
        try:
            for _ in range(a.servers):
                port = free_port()
                with log.open("a", encoding="utf-8") as err:  # a file: a full pipe would stop it
                    servers[port] = subprocess.Popen(
                        [
                            *(sys.executable, "-c", entry, "serve", "--db", url),
                            *("--port", str(port), "--monitor", str(folder / "monitor.yaml")),
                            *("--quiet-window", str(a.quiet_window)),
                        ],
                        env={**os.environ, "CHECKWEIGH_TOKEN": TOKEN},
                        stderr=err,
                    )
                wait_listening(servers[port], port)
            run(a, servers, url)
        finally:
            for server in servers.values():
                if a.profile:
                    server.send_signal(signal.SIGUSR1)
                    time.sleep(3)
                server.terminate()
                server.wait(60)
                if server.returncode not in (0, 130, -15):  # 130: the CLI's exit on a signal
                    print(f"server exit {server.returncode}: {log.read_text()[-2000:]}")


def wait_listening(server: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the server did not start") from None
            time.sleep(0.1)


def run(a: argparse.Namespace, servers: dict[int, subprocess.Popen[bytes]], url: str) -> None:
    pids = [s.pid for s in servers.values()]
    ports = list(servers)

    def memory() -> float:
        return sum(rss_mb(pid) for pid in pids)

    rss_start, cpu_start = memory(), sum(cpu_s(pid) for pid in pids)
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [
        ctx.Process(
            target=sender,
            args=(k, a.senders, ports[k % len(ports)], TOKEN, a.rate / a.senders, a.seconds, out),
        )
        for k in range(a.senders)
    ]
    began = time.monotonic()
    for p in procs:
        p.start()
    rss: list[tuple[float, float]] = []
    figures: list[dict[str, Any]] = []
    while len(figures) < len(procs):
        rss.append((time.monotonic() - began, memory()))
        try:
            figures.append(out.get(timeout=1.0))
        except Exception:  # noqa: BLE001 - queue.Empty: keep sampling
            continue
    last_span = time.monotonic()
    cpu_sending = sum(cpu_s(pid) for pid in pids) - cpu_start
    for p in procs:
        p.join()
    traces = sum(len(f["ids"]) for f in figures)
    while done_count(url) < traces and time.monotonic() - last_span < 300:
        rss.append((time.monotonic() - began, memory()))
        time.sleep(0.1)
    drained = time.monotonic() - last_span
    rss.append((time.monotonic() - began, memory()))
    stored = count(url)
    sent_ids = {i for f in figures for i in f["ids"]}
    results = stored["results"]
    made = sum(f["made"] for f in figures)
    acked = sum(f["acked"] for f in figures)
    failed = sum(f["failed"] for f in figures)
    timings = [t * 1000 for f in figures for t in f["timings"]]
    backend = "PostgreSQL" if a.db else "SQLite"
    print(
        f"live scoring, {len(pids)} server(s) over {backend}, {a.rate:,.0f} spans/s asked for "
        f"{a.seconds:g} s from {a.senders} sender process(es), {os.cpu_count()} cores, quiet "
        f"window {a.quiet_window:g} s"
    )
    print(f"  spans made {made:,}, acknowledged {acked:,} (export failed: {failed:,})")
    print(f"  spans stored {stored['spans']:,} (lost: {acked - stored['spans']:,})")
    first, last = min(f["span"][0] for f in figures), max(f["span"][1] for f in figures)
    print(
        f"  achieved rate {made / (last - first):,.0f} spans/s made over {last - first:.1f} s; "
        f"servers' CPU {100 * cpu_sending / (last_span - began):.0f}% of a core while sending, "
        f"senders {sum(f['cpu_s'] for f in figures):.0f} CPU s in all"
    )
    twice = sum(1 for n in results.values() if n > 1)
    missing = len(sent_ids - set(results))
    print(
        f"  traces sent {traces:,}, scored {len(set(results) & sent_ids):,} (missing {missing}, "
        f"scored twice {twice}); queue {stored['states']}"
    )
    print(
        f"  ingest latency per export ({len(timings):,} batches): p50 {pct(timings, 0.5):.0f} ms, "
        f"p95 {pct(timings, 0.95):.0f} ms, p99 {pct(timings, 0.99):.0f} ms, "
        f"mean batch {acked / max(len(timings), 1):.0f} spans"
    )
    peak = max(m for _, m in rss)
    quarters = [rss[int(q * (len(rss) - 1))][1] for q in (0.25, 0.5, 0.75)]
    print(
        f"  servers' RSS (summed): start {rss_start:.0f} MiB, at 1/4 {quarters[0]:.0f}, 1/2 "
        f"{quarters[1]:.0f}, 3/4 {quarters[2]:.0f}, peak {peak:.0f}, end {rss[-1][1]:.0f} MiB"
    )
    print(f"  last span sent -> last trace scored: {drained:.1f} s")


if __name__ == "__main__":
    main()
