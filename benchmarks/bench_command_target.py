"""The command target's cost per case: a program that answers at once, 1,000 cases.

Usage: python benchmarks/bench_command_target.py [--cases N] [--runs R] [--concurrency 8 16]

Two agents that do no work: a minimal Python program (``python -I -S``: read stdin, write a
fixed reply) and ``sh -c "printf ..."`` (a shell builtin, the cheapest program there is). For
each concurrency, N cases go through ``execute()`` with a fresh SQLite store, as
``checkweigh run`` does (start a process group per case, send the request, read and validate
the reply, score one check, write the result), and the same N processes through a bare
``asyncio.create_subprocess_exec`` loop (send the request, read the reply, parse it: what any
harness pays to spawn a program). Printed per case:

- the bare loop's wall time per case: the process-spawn cost, the program's own run included;
- execute()'s wall time per case, and the framework's share: the difference;
- one process at a time (the bare loop at concurrency 1): the latency of a spawn.

Each phase runs in its own interpreter. The best (lowest time) and the median of R runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from subprocess import PIPE

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _phase import in_child  # the benchmarks' own helper module

REPLY = '{"trace":[{"kind":"assistant","content":"done"}],"final_state":{"ok":true}}'
PY_AGENT = f"import sys\nsys.stdin.buffer.read()\nsys.stdout.write({REPLY!r})\n"
SUITE = """\
name: bench-command
cases: cases.jsonl
target:
  kind: command
  command: {command}
  concurrency: {concurrency}
checks:
  ok: {{type: equals, path: final_state.ok, value: true}}
rubrics:
  task: {{weights: {{ok: 1.0}}}}
"""


def agents(folder: Path) -> dict[str, list[str]]:
    (folder / "agent.py").write_text(PY_AGENT)
    return {
        "python -I -S agent.py": [sys.executable, "-I", "-S", str(folder / "agent.py")],
        "sh -c printf": ["sh", "-c", f"printf '%s' '{REPLY}'"],
    }


def write_suite(folder: Path, command: list[str], concurrency: int, n: int) -> Path:
    with (folder / "cases.jsonl").open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"c{i}", "input": {"n": i, "text": "Book Alice"}}) + "\n")
    suite = folder / f"suite-{concurrency}.yaml"
    suite.write_text(SUITE.format(command=json.dumps(command), concurrency=concurrency))
    return suite


def phase_execute(suite_path: Path, db: Path) -> dict[str, float]:
    from checkweigh.runs import run
    from checkweigh.store import Store
    from checkweigh.suites import load_suite

    suite = load_suite(suite_path)
    store = Store(f"sqlite:///{db}")
    start = time.perf_counter()
    outcome = run(suite, store=store, keep_results=False).outcome
    elapsed = time.perf_counter() - start
    summary = outcome.summary
    if summary.errored_executions or summary.executions == 0:
        raise SystemExit(f"{summary.errored_executions} of {summary.executions} errored")
    return {"cases": summary.executions, "seconds": elapsed}


def phase_bare(command: list[str], n: int, concurrency: int) -> dict[str, float]:
    payload = json.dumps({"id": "c0", "input": {"n": 0, "text": "Book Alice"}}).encode()

    async def one(limit: asyncio.Semaphore) -> None:
        async with limit:
            proc = await asyncio.create_subprocess_exec(
                *command, stdin=PIPE, stdout=PIPE, stderr=PIPE, start_new_session=True
            )
            out, _ = await proc.communicate(payload)
            if proc.returncode != 0 or not json.loads(out)["final_state"]["ok"]:
                raise SystemExit(f"bare call failed: {proc.returncode}")

    async def all_of_them() -> float:
        limit = asyncio.Semaphore(concurrency)
        start = time.perf_counter()
        await asyncio.gather(*(one(limit) for _ in range(n)))
        return time.perf_counter() - start

    return {"cases": n, "seconds": asyncio.run(all_of_them())}


def _bare(command: list[str], n: int, concurrency: int) -> list[str]:
    """The arguments of a bare-loop phase."""
    return ["--phase", "bare", "--command", json.dumps(command), "--cases", str(n),
            "--concurrency", str(concurrency)]  # fmt: skip


def _ms(result: dict[str, float]) -> float:
    return result["seconds"] * 1000.0 / result["cases"]


def _fmt(values: list[float], unit: str, digits: int = 2) -> str:
    return (
        f"best {min(values):.{digits}f}{unit}, median {statistics.median(values):.{digits}f}{unit}"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=1000)
    p.add_argument("--runs", type=int, default=3, help="runs (best and median reported)")
    p.add_argument("--concurrency", type=int, nargs="+", default=[8, 16])
    p.add_argument("--phase", choices=["execute", "bare"])
    p.add_argument("--suite", type=Path)
    p.add_argument("--db", type=Path)
    p.add_argument("--command")
    a = p.parse_args()
    if a.phase == "execute":
        print(json.dumps(phase_execute(a.suite, a.db)))
        return
    if a.phase == "bare":
        print(json.dumps(phase_bare(json.loads(a.command), a.cases, a.concurrency[0])))
        return
    script = Path(__file__)
    print(
        f"command target: {a.cases:,} cases, a program that answers at once; execute() with "
        f"SQLite vs a bare asyncio.create_subprocess_exec loop; {a.runs} runs (default "
        "concurrency: 8)"
    )
    with tempfile.TemporaryDirectory(prefix="checkweigh-bench-") as tmp:
        folder = Path(tmp)
        for name, command in agents(folder).items():
            spawn = [
                _ms(in_child(script, _bare(command, min(a.cases, 300), 1))) for _ in range(a.runs)
            ]
            print(f"\n{name}: one process at a time (bare): {_fmt(spawn, ' ms')} per spawn")
            for concurrency in a.concurrency:
                suite = write_suite(folder, command, concurrency, a.cases)
                framework, bare, rate = [], [], []
                for run in range(a.runs):
                    db = folder / f"run-{concurrency}-{run}.db"
                    ran = in_child(
                        script, ["--phase", "execute", "--suite", str(suite), "--db", str(db)]
                    )
                    plain = in_child(script, _bare(command, a.cases, concurrency))
                    framework.append(_ms(ran))
                    bare.append(_ms(plain))
                    rate.append(ran["cases"] / ran["seconds"])
                # the framework's share: execute() less the bare loop, best against best and
                # median against median (runs are not paired: the machine's noise is not)
                share_best = min(framework) - min(bare)
                share_median = statistics.median(framework) - statistics.median(bare)
                print(
                    f"  concurrency {concurrency:>2}: execute() {_fmt(framework, ' ms')} per case "
                    f"({max(rate):,.0f} cases/s best, {statistics.median(rate):,.0f} median); "
                    f"bare spawn {_fmt(bare, ' ms')} per case; framework share "
                    f"best {share_best:.2f} ms, median {share_median:.2f} ms per case"
                )


if __name__ == "__main__":
    main()
