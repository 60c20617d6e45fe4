"""``--executor ray`` on a local cluster: agent cases per second against the limit with one
node and with two, and recorded cases at scale with each process's peak memory.

Usage: python benchmarks/bench_ray.py [--cases 2000] [--cpus 4] [--recorded 200000] [--local]

1. A cluster of one node (a head with ``--cpus`` CPUs) runs ``--cases`` cases of an agent that
   sleeps 100 ms; a second node joins and the run is repeated. The limit is
   nodes x CPUs / 0.1 s (each Ray task holds one CPU while its agent sleeps).
2. A two-node cluster of ``--recorded-cpus`` CPUs per node (default 1: scoring is CPU-bound,
   and this machine's cores are what it has) scores ``--recorded`` / 4 and then ``--recorded``
   recorded cases of the scoring benchmark (1.7 KB each); the peak RSS of the driver and of
   every Ray worker is printed after each: flat means it does not grow with the cases. With
   ``--local`` the same cases are also scored without Ray, to compare the driver with a
   local run.

Each run is ``checkweigh.run`` in a child process, timed from the run's start to its
stored end (joining the cluster excluded). Both nodes run on this machine (127.0.0.1); on a
machine with fewer cores than CPUs the agent (which sleeps) is not CPU-bound, the recorded
cases are.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _phase import in_child  # the benchmarks' own helper module
from bench_scoring import DEFAULT_SUITE, record_cases
from bench_workers import recorded_suite

from support.ray_cluster import RayCluster, start_cluster

AGENT = """\
import time


def run(request):
    time.sleep(0.1)
    return {"trace": [{"kind": "assistant", "content": f"Booked case {request['n']} at 10:00."}],
            "final_state": {"time": "10:00"}}
"""

SUITE = """\
name: sleepy
cases: cases.jsonl
target: {agent: "sleepy_agent:run"}
checks:
  said_time: {type: contains, path: output, values: ["10:00"]}
  right_time: {type: equals, path: final_state.time, value: "10:00"}
rubrics:
  completion: {weights: {said_time: 0.5, right_time: 0.5}}
"""


def phase_run(suite_path: Path, db: Path, address: str, concurrency: int) -> dict[str, float]:
    from checkweigh.runs import RunOptions, run
    from checkweigh.runs.executors import LOCAL
    from checkweigh.runs.executors.ray import connect
    from checkweigh.store import Store
    from checkweigh.suites import load_suite

    suite = load_suite(suite_path)
    store = Store(f"sqlite:///{db}")
    executor = LOCAL if address == "local" else connect(address)
    start = time.perf_counter()
    options = RunOptions(concurrency=concurrency)
    outcome = run(suite, options, store=store, executor=executor, keep_results=False).outcome
    elapsed = time.perf_counter() - start
    return {
        "cases": outcome.summary.executions,
        "errored": outcome.summary.errored_executions,
        "seconds": elapsed,
        "cases_per_s": outcome.summary.executions / elapsed,
        **memory_mb(),
    }


def memory_mb() -> dict[str, float]:
    """This process's peak resident memory and what is resident now by kind (MB).

    The peak is the kernel's VmHWM of this process, not ``getrusage``'s ``ru_maxrss``: Linux
    carries ``ru_maxrss`` across ``exec`` from the process that started it, so a child of a
    benchmark holding the cases it wrote would report the parent's memory as its own.
    """
    kinds = {
        "VmHWM:": "driver_peak_rss_mb",
        "RssAnon:": "heap_mb",  # the process's own memory (Python heap, Ray's C++ core)
        "RssFile:": "file_mb",  # libraries mapped
        "RssShmem:": "shmem_mb",  # pages of Ray's shared object store it mapped
    }
    now = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition("\t")
        if key in kinds:
            now[kinds[key]] = int(value.split()[0]) / 1024.0
    return now


def worker_peaks_mb(cluster: RayCluster) -> list[float]:
    """The peak RSS (VmHWM) of every Ray worker process of ``cluster`` now: the processes of
    the sessions its ``ray start`` commands lead, named ``ray::`` (agents excepted)."""
    sessions = {p.pid for p in cluster.processes}
    peaks = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            status = (proc / "status").read_text()
        except OSError:  # it ended meanwhile
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        session = int(stat[stat.rindex(")") + 2 :].split()[3])
        if session not in sessions or not name.startswith("ray::") or "Agent" in name:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                peaks.append(int(line.split()[1]) / 1024.0)
    return sorted(peaks)


def _local_args(suite: Path, db: Path) -> list[str]:
    return ["--phase", "run", "--suite", str(suite), "--db", str(db), "--address", "local"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=2_000)
    p.add_argument("--cpus", type=int, default=4, help="CPUs (Ray workers) per node")
    p.add_argument("--recorded", type=int, default=200_000)
    p.add_argument(
        "--recorded-cpus", type=int, default=1, help="CPUs per node for the recorded cases"
    )
    p.add_argument(
        "--local",
        action="store_true",
        help="also score the recorded cases in one local process, for its memory",
    )
    p.add_argument("--phase", choices=["run"])
    p.add_argument("--suite", type=Path)
    p.add_argument("--db", type=Path)
    p.add_argument("--address")
    p.add_argument("--concurrency", type=int, default=8)
    a = p.parse_args()
    if a.phase == "run":
        print(json.dumps(phase_run(a.suite, a.db, a.address, a.concurrency)))
        return

    with tempfile.TemporaryDirectory(prefix="checkweigh-bench-ray-") as tmp:
        folder = Path(tmp)
        (folder / "sleepy_agent.py").write_text(AGENT)
        (folder / "suite.yaml").write_text(SUITE)
        rows = (json.dumps({"id": f"case-{i:05d}", "input": {"n": i}}) for i in range(a.cases))
        (folder / "cases.jsonl").write_text("\n".join(rows) + "\n")

        def run(suite: Path, name: str, concurrency: int) -> dict[str, float]:
            args = ["--phase", "run", "--suite", str(suite), "--db", str(folder / name)]
            args += ["--address", cluster.address, "--concurrency", str(concurrency)]
            return in_child(__file__, args)

        if a.cases:  # --cases 0: the recorded part only
            cluster = start_cluster(cpus_per_node=a.cpus, nodes=1)
            try:
                print(f"agent: {a.cases:,} cases, 100 ms each, {a.cpus} Ray workers per node")
                for nodes in (1, 2):
                    if nodes == 2:
                        cluster.start_node(a.cpus)
                        cluster.wait_for_nodes(2)
                    limit = nodes * a.cpus / 0.1
                    got = run(folder / "suite.yaml", f"agent{nodes}.db", 2 * nodes * a.cpus)
                    rate = got["cases_per_s"]
                    print(
                        f"  {nodes} node(s) x {a.cpus}: {rate:7.1f} cases/s of a limit of "
                        f"{limit:.0f} ({rate / limit:.0%}), {got['errored']:.0f} errored, "
                        f"driver peak RSS {got['driver_peak_rss_mb']:.0f} MB"
                    )
            finally:
                cluster.stop()
        # scoring is CPU-bound: as many workers as this machine has cores for it
        cluster = start_cluster(cpus_per_node=a.recorded_cpus, nodes=2)
        try:
            recorded = folder / "recorded.jsonl"
            record_cases(DEFAULT_SUITE, recorded, a.recorded)
            cases = recorded  # the file the suite reads now
            suite = recorded_suite(cases, "completion")
            try:
                print(f"recorded: 1.7 KB cases on 2 nodes x {a.recorded_cpus} worker(s)")
                for n in (a.recorded // 4, a.recorded):
                    part = folder / f"recorded-{n}.jsonl"
                    with recorded.open("rb") as fh, part.open("wb") as out:  # the first n cases
                        out.writelines(itertools.islice(fh, n))
                    text = suite.read_text().replace(str(cases), str(part))
                    suite.write_text(text)
                    got = run(suite, f"recorded{n}.db", 8)
                    peaks = worker_peaks_mb(cluster)
                    print(
                        f"  {got['cases']:>9,.0f} cases: {got['cases_per_s']:8,.0f} cases/s; "
                        f"peak RSS: driver {got['driver_peak_rss_mb']:.0f} MB (at the end: heap "
                        f"{got['heap_mb']:.0f}, object store {got['shmem_mb']:.0f}), workers "
                        f"{', '.join(f'{m:.0f}' for m in peaks)} MB"
                    )
                    if a.local:
                        got = in_child(__file__, _local_args(suite, folder / f"local{n}.db"))
                        print(
                            f"  {got['cases']:>9,.0f} cases locally (no Ray): "
                            f"{got['cases_per_s']:8,.0f} "
                            f"cases/s; peak RSS {got['driver_peak_rss_mb']:.0f} MB (at the "
                            f"end: heap {got['heap_mb']:.0f})"
                        )
                    cases = part
            finally:
                suite.unlink()
        finally:
            cluster.stop()


if __name__ == "__main__":
    main()
