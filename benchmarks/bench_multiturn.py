"""Framework overhead per conversation turn: a scripted user, an instant agent, many cases.

Usage: python benchmarks/bench_multiturn.py [--cases N] [--turns T] [--runs R] [--sync]

Each case is a T-turn conversation with a scripted user (``user: {turns: [...]}``); the agent
is a Python callable that answers at once (async by default; ``--sync`` runs a plain function,
which the engine calls in a thread of its own per turn). The whole engine path runs: the
conversation target, the per-turn requests and histories, the chat messages given to the agent,
the trace and final state assembled, three checks over the turns and the stop reason scored,
results handed on. What that costs per turn, with the agent taking no time, is the framework's
overhead. Prints the best and the median of R runs (bar: <= 2 ms per turn).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from checkweigh.checks import Count, Equals, NamedCheck
from checkweigh.core import Case, CaseResult, Rubric, RubricItem
from checkweigh.runs import Evaluator, run_cases
from checkweigh.runs.targets import CallableTarget, ConversationTarget

BAR_MS = 2.0


def _reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(messages)
    return {
        "trace": [
            {"kind": "tool_call", "name": "lookup", "arguments": {"turn": n}, "result": "ok"},
            {"kind": "assistant", "content": f"Answer to message {n}."},
        ],
        "final_state": {"messages_seen": n},
    }


async def instant_agent(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Answers at once: a tool call and a reply."""
    return _reply(messages)


def instant_sync_agent(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The same, as a plain function."""
    return _reply(messages)


def cases(n: int, turns: int) -> list[Case]:
    script = [f"User message {t}: please adjust the booking to slot {t}." for t in range(turns)]
    return [
        Case.model_validate({"id": f"conv-{i:05d}", "input": script[0], "user": {"turns": script}})
        for i in range(n)
    ]


def evaluator(turns: int) -> Evaluator:
    checks = (
        NamedCheck.of(
            "ended", Equals(path="final_state.conversation.stop_reason", value="script_end")
        ),
        NamedCheck.of(
            "last_turn",
            Equals(path="turns[-1].output", value=f"Answer to message {4 * turns - 3}."),
        ),
        NamedCheck.of("tools", Count(step="lookup", min=turns, max=turns)),
    )
    items = [RubricItem("ended", 0.4), RubricItem("last_turn", 0.4), RubricItem("tools", 0.2)]
    return Evaluator(checks, (Rubric.build("conversation", items),))


def one_run(n: int, turns: int, sync: bool) -> float:
    """Seconds for ``n`` conversations of ``turns`` turns; every case must pass."""
    batch, scorer = cases(n, turns), evaluator(turns)
    agent = instant_sync_agent if sync else instant_agent
    target = ConversationTarget(CallableTarget(agent))
    results: list[CaseResult] = []
    start = time.perf_counter()
    run_cases(scorer, batch, results.append, target=target, concurrency=8)
    elapsed = time.perf_counter() - start
    bad = [
        r
        for r in results
        if r.agent_error or any(v.state.value != "passed" for v in r.verdicts.values())
    ]
    if len(results) != n or bad:
        raise SystemExit(f"benchmark cases did not all pass: {bad[:1]}")
    return elapsed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=1000)
    p.add_argument("--turns", type=int, default=10)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--sync", action="store_true", help="a plain (threaded) agent function")
    args = p.parse_args()
    per_turn = []
    for _ in range(args.runs):
        seconds = one_run(args.cases, args.turns, args.sync)
        per_turn.append(seconds * 1000.0 / (args.cases * args.turns))
    best, median = min(per_turn), statistics.median(per_turn)
    kind = "sync" if args.sync else "async"
    print(
        f"{args.cases} conversations x {args.turns} turns, scripted user, instant {kind} agent, "
        f"{args.runs} runs"
    )
    print(f"framework overhead per turn: best {best:.3f} ms, median {median:.3f} ms")
    verdict = "PASS" if median <= BAR_MS else "FAIL"
    print(f"bar <= {BAR_MS:g} ms per turn: {verdict}")


if __name__ == "__main__":
    main()
