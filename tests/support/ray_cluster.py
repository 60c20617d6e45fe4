"""A real local Ray cluster for the Ray executor's tests: a head and a second node, two
``ray start --block`` processes on this machine (loopback only), each in a session of its own
so that stopping one ends every process it started, and nothing else.

Without Ray installed the tests are skipped, with the reason, unless CHECKWEIGH_REQUIRE_RAY=1
(CI sets it): then they fail, so that a run meant to test Ray never passes by skipping it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REQUIRE_ENV = "CHECKWEIGH_REQUIRE_RAY"
START_S = 90.0
"""How long the two nodes may take to come up on a loaded machine."""


def require_ray() -> None:
    """Skip (or, when required, fail) without Ray."""
    if importlib.util.find_spec("ray") is not None:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but Ray is not installed (pip install -e '.[dev]')")
    pytest.skip("Ray is not installed: pip install -e '.[ray]'")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RayCluster:
    """The running cluster: its address, its folder and the ``ray start`` processes."""

    address: str
    folder: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def nodes_alive(self) -> int:
        """Nodes the head counts alive now (``ray status``)."""
        status = subprocess.run(
            [_ray(), "status", f"--address={self.address}"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        active = status.stdout.partition("Active:")[2].partition("Pending:")[0]
        return sum(1 for line in active.splitlines() if "node_" in line)

    def start_node(self, cpus: int, *, head: bool = False, port: int = 0) -> None:
        """Start a node (the head when ``head``) in a session of its own."""
        common = [
            f"--num-cpus={cpus}",
            "--node-ip-address=127.0.0.1",
            "--disable-usage-stats",
            "--block",
        ]
        if head:
            args = [
                "--head",
                f"--port={port}",
                f"--temp-dir={self.folder}",
                "--include-dashboard=false",
            ]
        else:
            args = [f"--address={self.address}"]
        with (self.folder / f"node{len(self.processes)}.log").open("wb") as log:
            self.processes.append(
                subprocess.Popen(
                    [_ray(), "start", *args, *common],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
                )
            )

    def wait_for_nodes(self, n: int) -> None:
        deadline = time.monotonic() + START_S
        while self.nodes_alive() < n:
            ended = [p.args for p in self.processes if p.poll() is not None]
            if ended or time.monotonic() > deadline:
                logs = "".join(p.read_text()[-2000:] for p in self.folder.glob("node*.log"))
                raise AssertionError(f"the Ray cluster never had {n} nodes:\n{logs}")
            time.sleep(0.5)

    def stop(self) -> None:
        """End every process the two ``ray start`` started (their sessions), then the folder."""
        for proc in reversed(self.processes):
            _end_session(proc)
        self.processes.clear()
        shutil.rmtree(self.folder, ignore_errors=True)  # logs and sockets of ended processes


def _end_session(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    try:  # whatever of the session outlived its leader
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    proc.wait(timeout=20)


def _ray() -> str:
    return str(Path(sys.executable).parent / "ray")


def start_cluster(cpus_per_node: int = 1, nodes: int = 2) -> RayCluster:
    """A head and (with ``nodes`` 2) a second node on 127.0.0.1, each with ``cpus_per_node``
    CPUs."""
    # a short folder: Ray's socket paths under it must fit in 107 characters
    folder = Path(tempfile.mkdtemp(prefix="cwray-"))
    port = free_port()
    cluster = RayCluster(f"127.0.0.1:{port}", folder)
    try:
        cluster.start_node(cpus_per_node, head=True, port=port)
        cluster.wait_for_nodes(1)
        for n in range(2, nodes + 1):
            cluster.start_node(cpus_per_node)
            cluster.wait_for_nodes(n)
    except BaseException:
        cluster.stop()
        raise
    return cluster
