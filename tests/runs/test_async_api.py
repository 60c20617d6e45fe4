"""The async-first API: ``arun`` / ``aexecute`` awaited inside a running event loop, cases
passed in by the caller, the caller owning the judge, cancellation, and the sync wrappers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import checkweigh as cw
from checkweigh.core import Case
from checkweigh.judges import JudgeReply, JudgeRequest
from checkweigh.runs import RunOptions, arun
from checkweigh.store import RunStatus, Store
from checkweigh.suites import load_suite
from support.recorded_suite import make_case, write_suite

AGENT = """\
import asyncio

async def book(request):
    await asyncio.sleep(request.get("delay", 0))
    time = request["time"]
    return {
        "trace": [
            {"kind": "user", "content": f"Book Alice at {time}"},
            {"kind": "tool_call", "name": "book_meeting", "arguments": {"time": time}},
            {"kind": "assistant", "content": f"Booked Alice at {time}."},
        ],
        "final_state": {"booking": {"time": time}},
    }
"""

AGENT_SUITE = """\
name: agent bookings
cases: cases.jsonl
target: {agent: "agent:book", concurrency: 4}
checks:
  booked_ten:
    type: equals
    path: final_state.booking.time
    value: "10:00"
rubrics:
  completion:
    weights: {booked_ten: 1.0}
"""

JUDGED_SUITE = """\
name: judged
cases: cases.jsonl
checks:
  polite:
    type: judge
    question: Is the reply polite?
rubrics:
  tone:
    weights: {polite: 1.0}
"""


def _agent_suite(folder: Path) -> Path:
    (folder / "agent.py").write_text(AGENT)
    (folder / "cases.jsonl").write_text(json.dumps({"id": "file-case", "input": {"time": "9:00"}}))
    (folder / "suite.yaml").write_text(AGENT_SUITE)
    return folder / "suite.yaml"


class CountingJudge:
    """Answers yes; counts its calls and whether anyone closed it."""

    name = "counting:yes"

    def __init__(self) -> None:
        self.calls = 0
        self.closed = 0

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.calls += 1
        await asyncio.sleep(0)
        return JudgeReply(text='{"reason": "it thanks the user", "verdict": "yes"}', model="yes")

    async def aclose(self) -> None:
        self.closed += 1


def test_arun_is_awaited_in_a_running_loop_on_cases_the_caller_gives(tmp_path: Path) -> None:
    suite = load_suite(_agent_suite(tmp_path))
    given = [
        Case(id="ten", input={"time": "10:00", "delay": 0.05}),
        Case(id="eleven", input={"time": "11:00"}),
        Case(id="ten-again", input={"time": "10:00"}),
    ]

    async def server_side() -> cw.RunReport:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.005)

        beat = asyncio.create_task(ticker())
        report = await arun(suite, cases=(c for c in given))  # any iterable, read lazily
        beat.cancel()
        assert ticks > 3  # the loop kept serving other tasks while the agent ran
        return report

    report = asyncio.run(server_side())
    assert report.status is RunStatus.COMPLETE
    assert sorted(r.case_id for r in report.results) == ["eleven", "ten", "ten-again"]
    assert "file-case" not in {r.case_id for r in report.results}  # the suite's file unread
    completion = report.summary.rubrics[0]
    assert completion.checks[0].passed == 2
    assert completion.executions == 3
    assert any("cases given by the caller" in n for n in report.summary.notes)
    # an in-memory store by default: the report and the store agree
    assert report.store.get_run(report.run_id).executions == 3


def test_the_caller_owns_the_judge_across_runs_in_one_loop(tmp_path: Path) -> None:
    cases = [make_case(f"c{i}", participants=["Alice"], time="10:00") for i in range(3)]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "suite.yaml").write_text(JUDGED_SUITE)
    suite = load_suite(tmp_path / "suite.yaml")
    judge = CountingJudge()

    async def twice() -> list[cw.RunReport]:
        first = await arun(suite, judge=judge)
        assert judge.closed == 0  # still usable: the caller owns it
        second = await arun(suite, RunOptions(repeat=2), judge=judge)
        return [first, second]

    first, second = asyncio.run(twice())
    assert judge.calls == 3 + 6
    assert judge.closed == 0
    assert first.summary.rubrics[0].checks[0].passed == 3
    assert second.summary.rubrics[0].executions == 6

    # the sync wrapper keeps the same rule: a judge the caller passes is never closed
    report = cw.run(suite, judge=judge)
    assert judge.closed == 0
    assert report.passed  # no gates: nothing failed
    assert [r.case_id for r in report.results] == ["c0", "c1", "c2"]


def test_cancelling_the_awaiting_task_stores_the_run_incomplete(tmp_path: Path) -> None:
    suite = load_suite(_agent_suite(tmp_path))
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    slow = [
        Case(id=f"s{i}", input={"time": "10:00", "delay": 0.02 if i < 4 else 30}) for i in range(8)
    ]
    finished: list[str] = []

    async def cancel_midway() -> None:
        task = asyncio.create_task(
            arun(
                suite,
                RunOptions(concurrency=4),
                cases=slow,
                store=store,
                on_result=lambda r: finished.append(r.case_id),
            )
        )
        while len(finished) < 4:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(cancel_midway(), 20))
    (run,) = store.list_runs()
    assert run.status is RunStatus.INCOMPLETE
    assert run.executions == len(finished) == 4
    assert sorted(r.case_id for r in store.iter_results(run.id)) == sorted(finished)


def test_recorded_cases_inside_a_loop_leave_it_responsive(tmp_path: Path) -> None:
    write_suite(
        tmp_path,
        [make_case(f"c{i}", participants=["Alice", "Bob"], time="10:00") for i in range(3000)],
    )
    suite = load_suite(tmp_path / "suite.yaml")

    async def score() -> tuple[cw.RunReport, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        beat = asyncio.create_task(ticker())
        report = await arun(suite)
        beat.cancel()
        return report, ticks

    report, ticks = asyncio.run(score())
    assert len(report.results) == 3000
    assert ticks >= 3000 // 256  # the fast path yields to the loop between slices


def test_sync_entry_points_inside_a_running_loop_say_what_to_await(tmp_path: Path) -> None:
    suite = load_suite(_agent_suite(tmp_path))
    store = Store("sqlite://")

    async def misuse() -> list[str]:
        said = []
        for call in (lambda: cw.run(suite, store=store), lambda: cw.run(suite)):
            with pytest.raises(RuntimeError) as caught:
                call()
            said.append(str(caught.value))
        return said

    said = asyncio.run(misuse())
    assert "await checkweigh.arun(...)" in said[0] == said[1]
    assert store.list_runs() == []  # nothing started


def test_sync_run_equals_the_awaited_one(tmp_path: Path) -> None:
    suite = load_suite(_agent_suite(tmp_path))
    cases = [Case(id=t, input={"time": t}) for t in ("10:00", "12:00")]

    def verdicts(report: cw.RunReport) -> dict[str, Any]:
        return {r.case_id: {k: v.state for k, v in r.verdicts.items()} for r in report.results}

    awaited = asyncio.run(arun(suite, cases=cases))
    assert verdicts(cw.run(suite, cases=cases)) == verdicts(awaited)
    assert verdicts(awaited) == {
        "10:00": {"booked_ten": "passed"},
        "12:00": {"booked_ten": "failed"},
    }


def test_arun_records_and_replays_the_agent(tmp_path: Path) -> None:
    suite_file = _agent_suite(tmp_path)
    cases = [Case(id=t, input={"time": t}) for t in ("10:00", "12:00")]
    rec = tmp_path / "rec"

    async def both() -> tuple[cw.RunReport, cw.RunReport]:
        recorded = await arun(suite_file, RunOptions(record_agent=rec), cases=cases)
        (tmp_path / "agent.py").write_text("def book(request):\n    raise SystemExit(4)\n")
        return recorded, await arun(suite_file, RunOptions(replay_agent=rec), cases=cases)

    recorded, replayed = asyncio.run(both())

    def states(report: cw.RunReport) -> dict[str, str]:
        return {r.case_id: r.verdicts["booked_ten"].state.value for r in report.results}

    assert states(replayed) == states(recorded) == {"10:00": "passed", "12:00": "failed"}
    assert any("agent replayed from" in n for n in replayed.summary.notes)


def test_the_old_entry_points_warn_and_still_run(tmp_path: Path) -> None:
    suite = load_suite(_agent_suite(tmp_path))
    cases = [Case(id=t, input={"time": t}) for t in ("10:00", "12:00")]
    store = Store("sqlite://")
    with pytest.warns(DeprecationWarning, match=r"checkweigh.execute\(\) is deprecated.*run\(\)"):
        outcome = cw.execute(suite, store, cases=cases)
    assert outcome.summary.executions == outcome.kept == 2
    with pytest.warns(DeprecationWarning, match=r"checkweigh.aexecute\(\) is deprecated.*arun"):
        again = asyncio.run(cw.aexecute(suite, store, cases=cases, repeat=2))
    assert again.summary.executions == 4
    evaluator = cw.Evaluator.from_suite(suite)
    recorded = [
        Case(id=t, input={"time": t}, final_state={"booked": t}) for t in ("10:00", "12:00")
    ]
    seen: list[str] = []
    with pytest.warns(DeprecationWarning, match=r"checkweigh.run_cases\(\) is deprecated"):
        cw.run_cases(evaluator, recorded, lambda r: seen.append(r.case_id))
    with pytest.warns(DeprecationWarning, match=r"checkweigh.arun_cases\(\) is deprecated"):
        asyncio.run(cw.arun_cases(evaluator, recorded, lambda r: seen.append(r.case_id)))
    assert sorted(seen) == ["10:00", "10:00", "12:00", "12:00"]


def test_options_travel_as_json_and_a_bad_one_is_refused_as_the_cli_refuses_it(
    tmp_path: Path,
) -> None:
    suite = _agent_suite(tmp_path)
    options = RunOptions(repeat=2, executor="processes", workers=3, graded_weights=("x=1",))
    assert RunOptions.model_validate_json(options.model_dump_json()) == options
    from checkweigh.errors import InputError

    refused = {
        "--workers": RunOptions(workers=2),  # the suite calls an agent
        "--pass-threshold": RunOptions(thresholds=cw.runs.Thresholds(pass_threshold=120.0)),
        "--graded-weight": RunOptions(graded_weights=("x=1",)),
        "--executor": RunOptions(executor="nowhere"),
        "--ray-address": RunOptions(ray_address="10.0.0.1:6379"),
    }
    for flag, bad in refused.items():
        with pytest.raises(InputError) as caught:
            cw.run(suite, bad)
        assert str(caught.value).startswith(f"{flag}: "), caught.value
        assert "\n" not in str(caught.value)
    with pytest.raises(TypeError, match="RunOptions"):
        cw.run(suite, [Case(id="a", input={})])  # type: ignore[arg-type]


def test_two_suites_in_one_process_each_run_their_own_agent_module(tmp_path: Path) -> None:
    # each folder has its own agent.py: the second suite must not get the first one's module
    books = [Case(id="ten", input={"time": "10:00"})]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, other = _agent_suite(tmp_path / "a"), _agent_suite(tmp_path / "b")
    (tmp_path / "b" / "agent.py").write_text(
        "def book(request):\n    return {'final_state': {'booked': 'never'}}\n"
    )
    states = [
        cw.run(suite, cases=books).results[0].verdicts["booked_ten"].state.value
        for suite in (first, other, first)
    ]
    assert states == ["passed", "failed", "passed"]
