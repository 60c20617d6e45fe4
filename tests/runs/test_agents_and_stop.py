"""Agent calls that can be abandoned, agents that try to end the process, and stopping a run
from outside (what a signal handler does) on both engine paths."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from checkweigh.checks import NamedCheck, check
from checkweigh.core import Case, CaseResult, Rubric, RubricItem
from checkweigh.runs import (
    AgentFailure,
    AgentTarget,
    Evaluator,
    Interrupted,
    RunStopped,
    StopToken,
    abandoned_threads,
    run_cases,
)
from checkweigh.store import RunStatus, Store
from checkweigh.suites import load_suite
from support.engine import run_into
from support.recorded_suite import make_case, write_suite

# these drive the engine's case loop with hand-built evaluators and targets (no suite file),
# which only the deprecated run_cases() takes; they move when it is removed
pytestmark = pytest.mark.filterwarnings("ignore:checkweigh.run_cases:DeprecationWarning")


OK = {"trace": [{"kind": "assistant", "content": "Booked at 10:00."}], "final_state": {"t": 1}}


def _case(n: int) -> Case:
    return Case.model_validate({"id": f"book-{n}", "input": {"n": n}})


@check
def has_state(case: Case) -> bool:
    return bool(case.final_state)


EVALUATOR = Evaluator(
    (NamedCheck.of("has_state", has_state),),
    (Rubric.build("r", [RubricItem("has_state", 1.0)]),),
)


def test_a_blocked_sync_agent_times_out_on_time_and_its_thread_is_abandoned() -> None:
    release = threading.Event()

    def stuck(_request: Any) -> Any:
        release.wait(30)
        return OK

    target = AgentTarget(stuck, timeout_s=0.3)
    began = time.monotonic()
    with pytest.raises(AgentFailure, match=r"agent timed out after 0.3s"):
        asyncio.run(target.run_case(_case(0)))
    assert time.monotonic() - began < 2.0  # asyncio.run did not wait for the thread
    assert any(t.name == "checkweigh-agent" for t in abandoned_threads())
    release.set()
    deadline = time.monotonic() + 5
    while abandoned_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert abandoned_threads() == []  # a thread that ends late leaves the list


def _exits_0(_request: Any) -> Any:
    sys.exit(0)


async def _exits_3(_request: Any) -> Any:
    sys.exit(3)


def _interrupts(_request: Any) -> Any:
    raise KeyboardInterrupt


async def _generator_exit(_request: Any) -> Any:
    raise GeneratorExit


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        (_exits_0, "agent called sys.exit(0)"),
        (_exits_3, "agent called sys.exit(3)"),
        (_interrupts, "agent raised KeyboardInterrupt"),
        (_generator_exit, "agent raised GeneratorExit"),
    ],
)
def test_an_agent_that_tries_to_end_the_process_fails_its_case(agent: Any, message: str) -> None:
    results: list[CaseResult] = []
    run_cases(EVALUATOR, [_case(0), _case(1)], results.append, target=AgentTarget(agent))
    assert [r.agent_error for r in results] == [message, message]


def test_a_stop_on_the_recorded_path_ends_between_cases() -> None:
    stop = StopToken()
    results: list[CaseResult] = []

    def take(result: CaseResult) -> None:
        results.append(result)
        if len(results) == 7:
            stop.request("SIGINT")

    cases = [_case(n).model_copy(update={"final_state": {"t": n}}) for n in range(100)]
    with pytest.raises(Interrupted, match="SIGINT"):
        run_cases(EVALUATOR, cases, take, stop=stop)
    assert len(results) == 7


def test_a_stop_from_another_thread_cancels_blocked_agents_at_once() -> None:
    release = threading.Event()
    started = threading.Barrier(4)

    def stuck(request: Any) -> Any:
        if request["n"] == 0:
            return OK
        started.wait(10)
        release.wait(30)
        return OK

    stop = StopToken()
    results: list[CaseResult] = []

    def stop_when_blocked() -> None:
        started.wait(10)  # three agents blocked, plus this thread
        stop.request("SIGTERM")

    threading.Thread(target=stop_when_blocked, daemon=True).start()
    began = time.monotonic()
    with pytest.raises(Interrupted, match="SIGTERM"):
        run_cases(
            EVALUATOR,
            [_case(n) for n in range(10)],
            results.append,
            target=AgentTarget(stuck),
            concurrency=3,
            stop=stop,
        )
    assert time.monotonic() - began < 3.0
    assert [r.case_id for r in results] == ["book-0"]  # the finished case was handed on
    release.set()


def test_a_failing_result_handler_cancels_the_running_cases() -> None:
    def slow(_request: Any) -> Any:
        time.sleep(0.05)
        return OK

    calls = 0

    def handler(_result: CaseResult) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        run_cases(
            EVALUATOR,
            [_case(n) for n in range(50)],
            handler,
            target=AgentTarget(slow),
            concurrency=2,
        )
    assert calls == 3


def test_ctrl_c_in_a_script_stops_run_cleanly(tmp_path: Path) -> None:
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("something else handles Ctrl-C in this process")
    write_suite(
        tmp_path,
        [make_case(f"c{i:04d}", participants=["Alice", "Bob"], time="10:00") for i in range(3000)],
    )
    suite = load_suite(tmp_path / "suite.yaml")
    seen = 0

    def press_ctrl_c(_result: CaseResult) -> None:
        nonlocal seen
        seen += 1
        if seen == 1200:
            os.kill(os.getpid(), signal.SIGINT)

    with Store(f"sqlite:///{tmp_path / 'r.db'}") as store:
        with pytest.raises(RunStopped) as stopped:
            run_into(suite, store, on_result=press_ctrl_c)
        assert isinstance(stopped.value.cause, Interrupted)
        outcome = stopped.value.outcome
        assert outcome.kept == store.count_results(outcome.run_id) == 1200
        assert store.get_run(outcome.run_id).status is RunStatus.INCOMPLETE
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handed back
