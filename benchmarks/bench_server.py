"""Server time of the pages a reader opens on 10,000-case runs: the run, a page of 50 cases,
one case, the comparison of two runs, and the stability simulation of a run.

Usage: python benchmarks/bench_server.py [--cases N] [--requests N] [--pg URL]

Writes N airline customer-service cases (``benchmarks/_airline.py``: ~20 steps, ~15 KB each)
and a candidate version of them (a sixth of the cases behave differently, every latency
moves), runs both through the real ``checkweigh run`` path (the run service: suite, scoring
engine, store) into SQLite and, with ``--pg URL`` or ``$CHECKWEIGH_TEST_PG_URL``, PostgreSQL.
Then, in process through the ASGI app (httpx's ASGITransport: no socket, so the time is the
server's), requests each endpoint: the first request alone, then ``--requests``
more (pages of cases at offsets across the run, cases across the run), and prints the
median and the 95th percentile. The JSON API is measured, and the HTML pages when the server
has them (a page answering 404 is skipped, and said so). Each backend is measured twice: a
cold app (the first request of a run builds its cases index) and the app as ``checkweigh
serve`` runs it (the newest runs' indexes built on its background thread at start). The
comparison is asked for twice over: with the same thresholds every time (the server keeps a
comparison of finished runs: the page after its API call, or shown again) and with new ones
every time ("fresh": a comparison made anew). Bar: each under 300 ms; the stability simulation
(the default 2,000 reruns, three checks taken as noisy) under 5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _airline import SUITE, conversation  # the benchmarks' own helper module

BAR_MS = 300.0
STABILITY_BAR_MS = 5000.0
NOISE = (
    "noise=facts_in_replies%3D0.1&noise=confirmation_asked%3D0.05&noise=writes_as_expected%3D0.02"
)
"""The airline suite has no judge checks: three checks taken as noisy (CHECK=RATE)."""


def bar_of(label: str) -> float:
    """The bar of an endpoint (ms)."""
    return STABILITY_BAR_MS if "stability" in label else BAR_MS


def candidate(i: int) -> dict[str, Any]:
    """Case ``i`` as a changed agent answers it: one case in six behaves like another case
    (other failures, other facts), and every latency moves a little."""
    case = conversation(i + 1 if i % 6 == 1 else i)
    case["id"] = f"airline-{i:06d}"
    case["latency_ms"] = 230.0 + (i * 6151) % 1900
    return case


def base(i: int) -> dict[str, Any]:
    case = conversation(i)
    case["latency_ms"] = 200.0 + (i * 7919) % 1800
    return case


def write_inputs(folder: Path, n: int) -> tuple[Path, Path, Path]:
    """The suite and its two cases files."""
    files = []
    for name, make in (("base.jsonl", base), ("candidate.jsonl", candidate)):
        path = folder / name
        with path.open("w", encoding="utf-8") as fh:
            for i in range(n):
                fh.write(json.dumps(make(i), separators=(",", ":")) + "\n")
        files.append(path)
    suite = folder / "suite.yaml"
    suite.write_text(SUITE.format(cases="base.jsonl"), encoding="utf-8")
    return suite, files[0], files[1]


def store_runs(url: str, suite: Path, cases: tuple[Path, Path]) -> tuple[str, str, float]:
    """Run the suite over each cases file through the run service into ``url``; the two run
    ids and the seconds it took."""
    from checkweigh.service import RunRequest, run_request

    ids = []
    start = time.perf_counter()
    for path in cases:
        report = run_request(RunRequest(suite=suite, cases=path, db=url))
        try:
            ids.append(report.run_id)
        finally:
            report.store.close()
    return ids[0], ids[1], time.perf_counter() - start


class Timing:
    """One endpoint's times in milliseconds: wall clock, and the CPU time of the process (every
    thread: the server's work runs on worker threads) for the median, which a machine shared
    with other work does not inflate."""

    def __init__(
        self, label: str, first: float, rest: list[float], size: int, cpu: list[float]
    ) -> None:
        self.label, self.first, self.rest, self.size = label, first, rest, size
        self.cpu = statistics.median(cpu)

    @property
    def median(self) -> float:
        return statistics.median(self.rest)

    @property
    def p95(self) -> float:
        ordered = sorted(self.rest)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def measure(
    client: Any, label: str, url_of: Callable[[int], str], requests: int
) -> Timing | str:
    """Time ``url_of(0)`` once, then ``url_of(1..requests)``; a 404 on the first is a page
    this server does not have (the reason is returned instead)."""
    times: list[float] = []
    cpu: list[float] = []
    size = 0
    for k in range(requests + 1):
        url = url_of(k)
        start, used = time.perf_counter(), time.process_time()
        response = await client.get(url)
        body = response.content  # read whole: the time includes rendering it
        elapsed = (time.perf_counter() - start) * 1000.0
        if k:
            cpu.append((time.process_time() - used) * 1000.0)
        if response.status_code == 404 and k == 0:
            return f"{label:<15}skipped: {url} answers 404 (no such page on this server)"
        if response.status_code != 200:
            raise SystemExit(f"{url}: {response.status_code} {body[:300]!r}")
        times.append(elapsed)
        size = max(size, len(body))
    return Timing(label, times[0], times[1:], size, cpu)


async def bench_app(
    url: str, base_id: str, cand_id: str, n: int, requests: int, served: bool
) -> list[Any]:
    import httpx

    from checkweigh.server import create_app
    from checkweigh.store import Store

    step = max(1, n // max(1, requests))

    def case_id(k: int) -> str:
        return quote(f"airline-{(k * step + 37) % n:06d}", safe="")

    def offset(k: int) -> int:
        # pages across the whole run, the last one included (the deepest OFFSET)
        return min(n - 50, (k * step) // 50 * 50) if k else n - 50

    compare = f"base={base_id}&candidate={cand_id}"

    def fresh(k: int) -> str:
        # a significance level no request asked before: a comparison made anew
        return f"{compare}&alpha={0.05 + (k + 1) / 10_000:.4f}"

    api: list[tuple[str, Callable[[int], str]]] = [
        ("API run", lambda k: f"/api/runs/{base_id}"),
        ("API 50 cases", lambda k: f"/api/runs/{base_id}/results?limit=50&offset={offset(k)}"),
        ("API case", lambda k: f"/api/runs/{base_id}/results/{case_id(k)}"),
        ("API compare", lambda k: f"/api/runs/compare?{compare}"),
        ("API cmp fresh", lambda k: f"/api/runs/compare?{fresh(k)}"),
        ("API stability", lambda k: f"/api/runs/{base_id}/stability?{NOISE}&seed={k}"),
    ]
    html: list[tuple[str, Callable[[int], str]]] = [
        ("page run", lambda k: f"/runs/{base_id}"),
        ("page 50 cases", lambda k: f"/runs/{base_id}?page={offset(k) // 50 + 1}"),
        ("page case", lambda k: f"/runs/{base_id}/cases/{case_id(k)}?repeat=0"),
        ("page compare", lambda k: f"/compare?{compare}"),
        ("page cmp fresh", lambda k: f"/compare?{fresh(k + 1000)}"),
    ]
    out: list[Any] = []
    with Store(url) as store:
        # served: as `checkweigh serve` runs it, the newest runs' case indexes built on its
        # background thread before the first request; cold: nothing built yet
        app = create_app(store, warm=served)
        if served and app.state.warming is not None:
            app.state.warming.join()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for label, url_of in api + html:
                # the comparison and the simulation are the heaviest: fewer keep the run short
                count = requests
                if "compare" in label or "cmp" in label:
                    count = max(3, requests // 4)
                elif "stability" in label:
                    count = 2
                out.append(await measure(client, label, url_of, count))
    return out


def report(
    backend: str, stored_s: float, n: int, timings: list[Any], served: bool
) -> list[dict[str, Any]]:
    how = "as served (indexes built at start)" if served else "cold app (no index built yet)"
    print(f"\n{backend}, {how}: 2 runs of {n:,} cases stored in {stored_s:.1f}s")
    print(f"  {'':<15}{'first':>9}{'median':>9}{'p95':>9}{'cpu':>9}   n   answer")
    rows = []
    for t in timings:
        if isinstance(t, str):
            print(f"  {t}")
            continue
        bar = bar_of(t.label)
        verdict = "ok" if t.p95 < bar and t.first < bar else f"OVER {bar:.0f} ms"
        print(
            f"  {t.label:<15}{t.first:>7.0f}ms{t.median:>7.0f}ms{t.p95:>7.0f}ms{t.cpu:>7.0f}ms"
            f"{len(t.rest):>4}   {t.size / 1e3:>6.1f} KB  {verdict}"
        )
        rows.append(
            {
                "backend": backend,
                "served": served,
                "endpoint": t.label,
                "first_ms": t.first,
                "median_ms": t.median,
                "p95_ms": t.p95,
                "cpu_median_ms": t.cpu,
                "requests": len(t.rest),
            }
        )
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=10_000)
    p.add_argument("--requests", type=int, default=20, help="timed requests per endpoint")
    p.add_argument("--pg", default=os.environ.get("CHECKWEIGH_TEST_PG_URL"), help="PostgreSQL URL")
    a = p.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="checkweigh-bench-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        suite, base_cases, cand_cases = write_inputs(folder, a.cases)
        size = base_cases.stat().st_size
        print(
            f"input: 2 x {a.cases:,} cases, {size / 1e6:.1f} MB JSONL each "
            f"(written in {time.perf_counter() - t0:.1f}s); {a.requests} timed requests per "
            "endpoint after the first (compare: a quarter); server time in process (ASGI)"
        )
        backends = [("SQLite", f"sqlite:///{folder / 'server.db'}")]
        if a.pg:
            backends.append(("PostgreSQL", a.pg))
        for name, url in backends:
            base_id, cand_id, stored_s = store_runs(url, suite, (base_cases, cand_cases))
            for served in (False, True):
                timings = asyncio.run(bench_app(url, base_id, cand_id, a.cases, a.requests, served))
                rows += report(name, stored_s, a.cases, timings, served)
    for served in (False, True):
        how = "as served" if served else "cold app"
        over = [
            r
            for r in rows
            if r["served"] is served
            and max(r["p95_ms"], r["first_ms"]) >= bar_of(str(r["endpoint"]))
        ]
        print(
            f"bar, {how}: every request < {BAR_MS:.0f} ms (stability < {STABILITY_BAR_MS:.0f}): "
            + (
                "met"
                if not over
                else "NOT met: " + ", ".join(f"{r['backend']} {r['endpoint']}" for r in over)
            )
        )
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main()
