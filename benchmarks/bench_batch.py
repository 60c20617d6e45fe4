"""Provider batch APIs against synchronous calls: 2,000 judge calls (issue 25, item 2).

Usage: python benchmarks/bench_batch.py [--calls 2000] [--latency 0.2] [--polls 3]

A recorded suite of ``--calls`` cases with one yes/no judge check (one call a case, every
prompt different) is judged through ``checkweigh run`` against checkweigh.testing's fake
provider on 127.0.0.1, on the OpenAI and the Anthropic wire:

- ``sync``: the defaults (adaptive concurrency), each call answered after ``--latency`` s;
- ``batch``: ``--judge-mode batch --judge-poll 1``, the fake's batch ending after ``--polls``
  polls (the file upload, the polls and the result download are real HTTP through the SDK).

Printed per wire and mode: the wall of ``checkweigh run``, the calls, the stored token counts
and the cost at list prices (gpt-4.1-mini $0.40/$1.60 and claude-sonnet-4-5 $3/$15 per million
tokens in/out; batch calls are billed at half). The batch wall is the client's side only: a
real provider takes minutes to 24 hours to end a batch, which is the price of the discount.
Token counts are the fake's (a prompt under 1,024 tokens counts as 120 input tokens on the
OpenAI wire, 150 on Anthropic's), so the costs compare the modes, not real bills.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from checkweigh.testing import BatchScript, Reply, fake_llm_server

PRICES = {
    "openai": ("openai:gpt-4.1-mini", "0.4,1.6"),
    "anthropic": ("anthropic:claude-sonnet-4-5", "3,15"),
}
SUITE = """\
name: batch-bench
description: recorded booking replies, judged for grounding
cases: cases.jsonl
checks:
  grounded:
    type: judge
    question: Is every statement in the agent's final reply supported by the tool results?
rubrics:
  grounding:
    weights:
      grounded: 1.0
"""


def _case(i: int) -> dict[str, Any]:
    day = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")[i % 5]
    hour = 9 + i % 8
    return {
        "id": f"booking-{i:05d}",
        "input": {"message": f"Book the review of project {i} with Alice and Bob on {day}"},
        "trace": [
            {"kind": "user", "content": f"Book the review of project {i} on {day}"},
            {
                "kind": "tool_call",
                "name": "check_availability",
                "arguments": {"day": day},
                "result": f"{hour}:00 free for Alice and Bob",
            },
            {"kind": "tool_call", "name": "book_meeting", "arguments": {"time": f"{hour}:00"}},
            {
                "kind": "assistant",
                "content": f"Booked the project {i} review on {day} at {hour}:00.",
            },
        ],
    }


def _suite(folder: Path, calls: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "cases.jsonl").open("w") as fh:
        for i in range(calls):
            fh.write(json.dumps(_case(i)) + "\n")
    suite = folder / "suite.yaml"
    suite.write_text(SUITE)
    return suite


def _respond(wire: str, latency: float) -> Any:
    answer = {"verdict": "yes", "reason": "the reply matches the tool results"}

    def respond(body: dict[str, Any]) -> Reply:
        if wire == "anthropic":
            return Reply(tool_input=answer, delay_s=latency)
        return Reply(json.dumps(answer), delay_s=latency)

    return respond


def run(suite: Path, wire: str, mode: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """One judged run; its judge stats, the wall and what the fake saw."""
    judge, prices = PRICES[wire]
    out = work / f"{wire}-{mode}.json"
    with fake_llm_server([], wire=wire, respond=_respond(wire, args.latency)) as server:
        server.batches.script = BatchScript(polls=args.polls)
        env = {
            **os.environ,
            "OPENAI_API_KEY": "bench-not-a-key",
            "ANTHROPIC_API_KEY": "bench-not-a-key",
            "OPENAI_BASE_URL": server.base_url,
            "ANTHROPIC_BASE_URL": server.base_url,
        }
        command = [
            *(sys.executable, "-m", "checkweigh", "run", str(suite)),
            *("--db", f"sqlite:///{work / f'{wire}-{mode}.db'}", "-q", "--no-cache"),
            *("--judge", judge, "--judge-prices", prices, "--json", str(out)),
        ]
        if mode == "batch":
            command += ["--judge-mode", "batch", "--judge-poll", "1"]
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        seen = server.batches.stats()
    if done.returncode not in (0, 1):
        raise SystemExit(f"run failed ({done.returncode}): {done.stdout}{done.stderr}")
    stats: dict[str, Any] = json.loads(out.read_text())["summary"]["judge"]
    return {"stats": stats, "wall": wall, "batches": seen}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--latency", type=float, default=0.2, help="seconds a sync call takes")
    p.add_argument("--polls", type=int, default=3, help="polls before a batch ends")
    args = p.parse_args()
    print(
        f"{args.calls} judge calls, sync latency {args.latency:g} s, a batch ends after "
        f"{args.polls} poll(s) 1 s apart; {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, "
        f"Python {sys.version.split()[0]}"
    )
    header = (
        f"{'wire':<10} {'mode':<6} {'wall s':>7} {'calls':>6} {'batch':>6} {'batches':>7}"
        f" {'tokens in':>10} {'out':>8} {'cost $':>8} {'vs sync':>7}"
    )
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        suite = _suite(work / "suite", args.calls)
        for wire, (judge, prices) in PRICES.items():
            sync_cost = None
            for mode in ("sync", "batch"):
                r = run(suite, wire, mode, args, work)
                s = r["stats"]
                cost = s["cost_usd"]
                sync_cost = cost if mode == "sync" else sync_cost
                ratio = f"{cost / sync_cost:.2f}" if sync_cost else "-"
                print(
                    f"{wire:<10} {mode:<6} {r['wall']:>7.1f} {s['calls']:>6} "
                    f"{s.get('batch_calls', 0):>6} {r['batches']['batches']:>7}"
                    f" {s['input_tokens']:>10,} {s['output_tokens']:>8,} {cost:>8.4f} {ratio:>7}"
                )
            print(f"  ({judge} at ${prices.replace(',', ' in, $')} out per million tokens)")


if __name__ == "__main__":
    main()
