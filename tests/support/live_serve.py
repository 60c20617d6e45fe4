"""Real ``checkweigh serve --monitor`` processes for the live-scoring tests, the SDK's OTLP/HTTP
exporter pointed at them, and what their database holds read back with plain SQL."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from sqlalchemy import text

from checkweigh.store import Store

from .cli_process import ENTRY

TOKEN = "a-token-for-the-live-process-tests"


def free_port() -> int:
    """A port nothing listens on now (on 127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Serve:
    """One ``checkweigh serve`` process (``start`` again after ``kill`` restarts it on the same
    port and database)."""

    db: str
    monitor: Path
    port: int = field(default_factory=free_port)
    args: Sequence[str] = ()
    proc: subprocess.Popen[str] | None = None

    def start(self, timeout: float = 30) -> Serve:
        """Start the server and wait until it accepts connections."""
        # stderr to a file, not a pipe: a pipe nobody reads would stop the server once full
        with self.log.open("a", encoding="utf-8") as err:
            self.proc = subprocess.Popen(
                [
                    *(sys.executable, "-c", ENTRY, "serve", "--db", self.db),
                    *("--port", str(self.port), "--monitor", str(self.monitor), *self.args),
                ],
                cwd=self.monitor.parent,
                stdout=subprocess.DEVNULL,
                stderr=err,
                text=True,
                env={**os.environ, "CHECKWEIGH_TOKEN": TOKEN, "COLUMNS": "200"},
            )
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError(f"serve did not start: {self.errors()}") from None
                time.sleep(0.05)

    @property
    def pid(self) -> int:
        """The process id (it names the process's claims: host:pid:random)."""
        assert self.proc is not None
        return self.proc.pid

    def kill(self) -> None:
        """SIGKILL: no clean-up, no lease given back, nothing flushed."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        """End it (SIGTERM, then SIGKILL if it lingers); a stopped one is left alone."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    @property
    def log(self) -> Path:
        """Where its stderr goes (every start appends)."""
        return self.monitor.parent / f"serve-{self.port}.log"

    def errors(self) -> str:
        """The end of what it wrote on stderr."""
        return self.log.read_text(encoding="utf-8", errors="replace")[-3000:]

    def exporter(self, acked: Counter[str] | None = None) -> OTLPSpanExporter:
        """The SDK's OTLP/HTTP exporter (protobuf) pointed at this server; with ``acked``,
        the spans of each export the server acknowledged are counted per trace id."""
        return CountingExporter(
            acked,
            endpoint=f"http://127.0.0.1:{self.port}/v1/traces",
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=20,
        )


class CountingExporter(OTLPSpanExporter):
    """The SDK's exporter, counting per trace id the spans of the exports that succeeded (a
    200 from the server: they are stored)."""

    def __init__(self, acked: Counter[str] | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.acked = acked

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = super().export(spans)
        if result is SpanExportResult.SUCCESS and self.acked is not None:
            for span in spans:
                assert span.context is not None
                self.acked[format(span.context.trace_id, "032x")] += 1
        return result


def scored(db: str) -> dict[str, int]:
    """Per trace id, how many results the monitors' window runs hold for it."""
    with Store(db) as store, store.engine.connect() as conn:
        rows = conn.execute(
            text("select case_id, count(*) from case_results where run_id like 'mon-%' group by 1")
        ).all()
    return {str(case_id): int(n) for case_id, n in rows}


def traces(db: str) -> dict[str, tuple[str, int, str | None]]:
    """Per trace id: its state in the queue, its spans stored (late ones included) and the
    process that holds its claim (None unless claimed)."""
    with Store(db) as store, store.engine.connect() as conn:
        rows = conn.execute(text("select trace_id, state, spans + late, owner from live_traces"))
        return {str(r[0]): (str(r[1]), int(r[2]), r[3]) for r in rows}


def wait_until(what: Callable[[], bool], timeout: float, why: str) -> None:
    """Poll ``what`` until it holds; fail with ``why`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s: {why}")
        time.sleep(0.1)


SLOW_CHECK = '''\
"""A check that takes its time (scoring is slow: a process killed mid-scoring holds claims)
and notes which process scored which case."""

import asyncio
import os


async def slow_noted(case, seconds=0.1, log="scored.log"):
    await asyncio.sleep(seconds)
    with open(log, "a", encoding="utf-8") as out:  # one short line: appends do not interleave
        out.write(f"{os.getpid()} {case.id}\\n")
    return len(case.trace) > 0, f"{len(case.trace)} steps"
'''
"""The module of the ``python`` check the process tests add to the booking suite."""


def slow_check_yaml(seconds: float, log: Path) -> str:
    """The suite lines (indented as its checks) of the slow, noting check."""
    return (
        "  noted:\n    type: python\n    function: live_slow_checks:slow_noted\n"
        f"    args: {{seconds: {seconds}, log: {str(log)!r}}}\n"
    )


def noted(log: Path) -> list[tuple[int, str]]:
    """(pid, trace id) of every case the slow check scored, in order."""
    if not log.exists():
        return []
    out = []
    for line in log.read_text(encoding="utf-8").splitlines():
        pid, _, case_id = line.partition(" ")
        out.append((int(pid), case_id))
    return out
