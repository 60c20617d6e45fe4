"""``@check`` functions, sync and async, their answers, and NamedCheck's guard and errors."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from checkweigh.checks import Equals, FunctionCheck, NamedCheck, check, to_verdict
from checkweigh.core import (
    Case,
    Condition,
    ConditionOp,
    FieldPath,
    Verdict,
    VerdictState,
    errored,
    failed,
    not_applicable,
    passed,
)

P, F, NA, E = (
    VerdictState.PASSED,
    VerdictState.FAILED,
    VerdictState.NOT_APPLICABLE,
    VerdictState.ERRORED,
)


@check
def offered_alternatives(case: Case) -> bool:
    """The reply proposes each free slot."""
    return all(slot in case.trace[3].content for slot in case.final_state["alternatives"])


@check(version="3")
def mentions_confirmation(case: Case, prefix: str = "bk-") -> tuple[bool, str]:
    ok = prefix in case.output
    return ok, f"reply {'mentions' if ok else 'lacks'} a {prefix} id"


@check(name="no_double_booking")
def single_booking(case: Case) -> Verdict:
    n = sum(1 for s in case.trace if s.name == "book_meeting")
    if n == 0:
        return not_applicable("nothing booked")
    return passed("booked once") if n == 1 else failed(f"booked {n} times")


@check
async def judged_polite(case: Case, threshold: float = 0.5) -> tuple[bool, str]:
    await asyncio.sleep(0)
    score = 0.9 if "Would" in case.trace[3].content else 0.1
    return score >= threshold, f"politeness {score:.1f} vs {threshold}"


@check
def reads_missing_field(case: Case) -> bool:
    return bool(case.final_state["booking"]["room"])


@check
async def calls_flaky_judge(case: Case) -> bool:
    await asyncio.sleep(0)
    raise TimeoutError("judge did not answer in 30s")


@check
def returns_a_score(case: Case) -> float:
    return 0.8


@check
async def returns_nothing(case: Case) -> None:
    await asyncio.sleep(0)


def test_decorated_functions_keep_their_identity() -> None:
    assert isinstance(offered_alternatives, FunctionCheck)
    assert offered_alternatives.name == "offered_alternatives"
    assert offered_alternatives.__doc__ == "The reply proposes each free slot."
    assert repr(mentions_confirmation) == "<check mentions_confirmation v3>"
    assert single_booking.name == "no_double_booking"
    assert (offered_alternatives.is_async, judged_polite.is_async) == (False, True)


def test_sync_answers_become_verdicts(conflict_case: Case) -> None:
    runs = {
        name: NamedCheck.of(name, fn).run(conflict_case)
        for name, fn in {
            "alternatives": offered_alternatives,
            "confirmation": mentions_confirmation,
            "confirmation_ref": mentions_confirmation.bind(prefix="REF-"),
            "double": single_booking,
        }.items()
    }
    assert runs == {
        "alternatives": passed(),
        "confirmation": passed("reply mentions a bk- id"),
        "confirmation_ref": failed("reply lacks a REF- id"),
        "double": passed("booked once"),
    }


def test_async_checks_run_with_arun(conflict_case: Case) -> None:
    polite = NamedCheck.of("polite", judged_polite)
    strict = NamedCheck.of("polite_strict", judged_polite.bind(threshold=0.95))
    assert polite.is_async is True
    assert asyncio.run(polite.arun(conflict_case)) == passed("politeness 0.9 vs 0.5")
    assert asyncio.run(strict.arun(conflict_case)) == failed("politeness 0.9 vs 0.95")
    # a sync check runs through arun too
    assert asyncio.run(NamedCheck.of("alt", offered_alternatives).arun(conflict_case)) == passed()
    # an async check called synchronously is an error, not a silent pass
    verdict = polite.run(conflict_case)
    assert verdict.state is E
    assert verdict.error == "async check called synchronously; use arun()"


def test_raising_checks_are_errored_with_the_exception_text(conflict_case: Case) -> None:
    sync = NamedCheck.of("room", reads_missing_field).run(conflict_case)
    assert sync == errored("KeyError: 'room'")
    assert sync.reason == "check raised an error"
    flaky = asyncio.run(NamedCheck.of("judge", calls_flaky_judge).arun(conflict_case))
    assert flaky == errored("TimeoutError: judge did not answer in 30s")


def test_junk_answers_are_errored_not_failed(conflict_case: Case) -> None:
    score = NamedCheck.of("score", returns_a_score).run(conflict_case)
    assert score.state is E
    assert score.reason == "invalid check answer"
    assert score.error == ("check returned float 0.8; expected a Verdict, a bool or (bool, reason)")
    nothing = asyncio.run(NamedCheck.of("nothing", returns_nothing).arun(conflict_case))
    assert nothing.state is E
    assert nothing.error is not None
    assert nothing.error.startswith("check returned NoneType None")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (True, passed()),
        (False, failed("check returned False")),
        ((True, "slot 14:00 offered"), passed("slot 14:00 offered")),
        ((False, "no slot offered"), failed("no slot offered")),
        ((False, ""), failed("check returned False")),
        (not_applicable("no conflict"), not_applicable("no conflict")),
        (errored("boom"), errored("boom")),
    ],
)
def test_to_verdict_accepts_the_documented_answers(answer: Any, expected: Verdict) -> None:
    assert to_verdict(answer) == expected


@pytest.mark.parametrize(
    "answer",
    [1, 0, None, "passed", (True,), (True, "ok", "extra"), ("yes", "ok"), (1, "ok"), [True, "ok"]],
)
def test_to_verdict_rejects_anything_else(answer: Any) -> None:
    verdict = to_verdict(answer)
    assert verdict.state is E
    assert verdict.reason == "invalid check answer"
    assert verdict.error is not None
    assert f"check returned {type(answer).__name__}" in verdict.error


def test_when_guard_makes_a_check_not_applicable(
    conflict_case: Case, run_data: dict[str, Any]
) -> None:
    only_conflicts = (
        Condition(FieldPath.parse("metadata.scenario"), ConditionOp.EQUALS, "conflict"),
        Condition(FieldPath.parse("final_state.booking"), ConditionOp.EXISTS, True),
    )
    named = NamedCheck.of("alternatives", offered_alternatives, only_conflicts)
    assert named.run(conflict_case) == passed()
    run_data["metadata"] = {"scenario": "happy_path"}
    happy = Case.model_validate(run_data)
    assert named.run(happy) == not_applicable("not metadata.scenario == 'conflict'")
    assert asyncio.run(named.arun(happy)) == not_applicable("not metadata.scenario == 'conflict'")
    # a guarded-out check is never called, so its bugs cannot error the case
    guarded_bug = NamedCheck.of("room", reads_missing_field, only_conflicts)
    assert guarded_bug.run(happy).state is NA
    assert guarded_bug.run(conflict_case).state is E


def test_named_builtin_checks(conflict_case: Case) -> None:
    named = NamedCheck.of(
        "correct_time", Equals(path="final_state.booking.time", expected_path="ground_truth.time")
    )
    assert (named.name, named.version, named.is_async) == ("correct_time", "1", False)
    assert named.run(conflict_case).state is P
    assert asyncio.run(named.arun(conflict_case)).state is P
    assert NamedCheck.of("v3", mentions_confirmation).version == "3"


def test_class_checks_sync_and_async(conflict_case: Case) -> None:
    class SlotsOffered:
        version = "2"

        def evaluate(self, case: Case) -> bool:
            return len(case.final_state["alternatives"]) >= 2

    class AsyncJudge:
        async def evaluate(self, case: Case) -> tuple[bool, str]:
            await asyncio.sleep(0)
            return True, "judge says polite"

    slots = NamedCheck.of("slots", SlotsOffered())
    judge = NamedCheck.of("judge", AsyncJudge())
    assert (slots.version, slots.is_async) == ("2", False)
    assert (judge.version, judge.is_async) == ("1", True)
    assert slots.run(conflict_case) == passed()
    assert asyncio.run(judge.arun(conflict_case)) == passed("judge says polite")
    assert judge.run(conflict_case).state is E


def test_a_check_object_may_have_its_own_runner_attribute(conflict_case: Case) -> None:
    # CheckLike only asks for evaluate(case); other attributes are the check's own business
    class AnswerJudge:
        def __init__(self, runner: Any) -> None:
            self.runner = runner  # e.g. the client that asks the judge model

        def evaluate(self, case: Case) -> tuple[bool, str]:
            answer = self.runner(case.output)
            return answer == "yes", f"judge said {answer}"

    named = NamedCheck.of("judge", AnswerJudge(lambda text: "yes" if "Booked" in text else "no"))
    assert named.run(conflict_case) == passed("judge said yes")


def test_bind_rejects_unknown_options() -> None:
    with pytest.raises(TypeError, match="prefx"):
        mentions_confirmation.bind(prefx="REF-")
    bound = mentions_confirmation.bind(prefix="REF-")
    assert bound.kwargs == {"prefix": "REF-"}
    assert mentions_confirmation.kwargs == {}
    assert bound.version == "3"


def _ends_process(kind: str) -> Callable[[Case], bool]:
    def body(case: Case) -> bool:
        if kind == "exit0":
            sys.exit(0)
        if kind == "exit3":
            raise SystemExit(3)
        if kind == "interrupt":
            raise KeyboardInterrupt
        raise GeneratorExit

    return body


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("exit0", "check called sys.exit(0)"),
        ("exit3", "check called sys.exit(3)"),
        ("interrupt", "check raised KeyboardInterrupt"),
        ("generator", "check raised GeneratorExit"),
    ],
)
def test_a_check_that_tries_to_end_the_process_is_errored(kind: str, message: str) -> None:
    body = _ends_process(kind)

    async def async_body(case: Case) -> bool:
        return body(case)

    case = Case.model_validate({"id": "c1", "input": {}})
    sync_check = NamedCheck.of("ends", check(body))
    guarded = NamedCheck.of(
        "ends", check(body), (Condition(FieldPath.parse("id"), ConditionOp.EQUALS, "c1"),)
    )
    async_check = NamedCheck.of("ends", check(async_body))
    for verdict in (
        sync_check.run(case),
        guarded.run(case),
        asyncio.run(sync_check.arun(case)),
        asyncio.run(async_check.arun(case)),
    ):
        assert verdict.state is VerdictState.ERRORED
        assert verdict.error == message


class _LoneSurrogateCheck:
    """A check class whose reason holds a lone surrogate (text read with surrogatepass)."""

    def evaluate(self, case: Case) -> Verdict:
        return failed("expected 10:00, got \ud800")


def _answers(case: Case) -> dict[str, Verdict]:
    @check
    def verdict(case: Case) -> Verdict:
        return failed("rude \udfff")

    @check
    def pair(case: Case) -> tuple[bool, str]:
        return False, "pair \ud83d\ude00"

    @check
    def raises(case: Case) -> bool:
        raise ValueError("bad \udc80 input")

    @check
    def not_text(case: Case) -> Verdict:
        return Verdict(VerdictState.FAILED, 3)  # type: ignore[arg-type]

    @check
    async def later(case: Case) -> Verdict:
        return failed("async \ud800")

    checks = {
        "verdict": verdict,
        "pair": pair,
        "raises": raises,
        "not_text": not_text,
        "klass": _LoneSurrogateCheck(),
        "later": later,
    }
    return {name: asyncio.run(NamedCheck.of(name, c).arun(case)) for name, c in checks.items()}


def test_user_checks_answers_are_made_storable_where_they_enter(conflict_case: Case) -> None:
    got = _answers(conflict_case)
    assert got["verdict"] == failed("rude \\udfff")
    assert got["pair"] == failed("pair \U0001f600")
    assert got["raises"].error == "ValueError: bad \\udc80 input"
    assert got["not_text"] == failed("3")
    assert got["klass"] == failed("expected 10:00, got \\ud800")
    assert got["later"] == failed("async \\ud800")
    # the synchronous hot path too
    sync = NamedCheck.of("klass", _LoneSurrogateCheck()).runner()(conflict_case)
    assert sync == failed("expected 10:00, got \\ud800")
    for verdict in got.values():
        orjson.dumps(verdict.to_dict())
