"""A judge check's ``trace:`` view: which steps the judge sees, the cut that keeps the head and
the tail and says what it left out, and the version that changes only when a view is set."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from checkweigh.core import Case, VerdictState
from checkweigh.judges import (
    DEFAULT_FORMATTER,
    ExpectedOutcomesCheck,
    FaithfulnessCheck,
    GradedJudgeCheck,
    JudgeCheck,
)
from checkweigh.store import Store
from checkweigh.testing import Reply, fake_llm_server
from judges.test_context_limit import add_case, long_case
from support.judge_suite import CASES, YES, judge_suite, run_judged


def trace_lines(check: JudgeCheck, case: Case) -> list[str]:
    prompt = check.request(case).messages[-1].content
    body = prompt.split("<agent_trace>\n", 1)[1].split("\n</agent_trace>", 1)[0]
    return body.splitlines()


def numbers(lines: list[str]) -> list[int]:
    return [int(m.group(1)) for line in lines if (m := re.match(r"\[(\d+)\] ", line))]


def conversation() -> Case:
    """Three turns of a booking desk: a user step, a tool call and a reply each."""
    trace: list[dict[str, Any]] = []
    for turn, ask in enumerate(["Book Alice at 10", "Add Bob", "Make it 11 instead"], start=1):
        trace.append({"kind": "user", "content": ask})
        trace.append({"kind": "tool_call", "name": "book_meeting", "arguments": {"turn": turn}})
        trace.append({"kind": "assistant", "content": f"Done ({turn})."})
    return Case.model_validate({"id": "desk", "input": "book", "trace": trace})


LONG = Case.model_validate(long_case())


def test_without_a_view_the_prompt_and_version_are_as_before() -> None:
    plain = JudgeCheck(question="Grounded?")
    assert plain.version == "judge-binary/1+plain@2"
    assert plain.formatter is DEFAULT_FORMATTER
    lines = trace_lines(plain, LONG)
    assert numbers(lines) == list(range(1, 501))  # every step, no note, no marker
    assert not any(line.startswith("[...") or line.startswith("[showing") for line in lines)


def test_max_steps_keeps_head_and_tail_and_says_what_was_cut() -> None:
    check = JudgeCheck(question="Grounded?", trace={"max_steps": 40})
    lines = trace_lines(check, LONG)
    assert numbers(lines) == [*range(1, 21), *range(481, 501)]
    assert lines[20] == "[... 460 step(s) cut: steps 21-480 (tool_call 460) ...]"
    assert check.version == "judge-binary/1+plain@2+view(max_steps=40)"
    # a request's cache key holds the formatter's ident: a view is never answered from the
    # cache of the full trace
    assert check.request(LONG).tags["formatter"] == "plain@2+view(max_steps=40)"


def test_max_chars_bounds_the_trace_and_keeps_the_first_and_last_steps() -> None:
    check = JudgeCheck(question="Grounded?", trace={"max_chars": 6000})
    lines = trace_lines(check, LONG)
    kept = numbers(lines)
    assert (kept[0], kept[-1]) == (1, 500)
    assert sum(len(line) + 1 for line in lines if not line.startswith("[...")) <= 6000
    gap = next(i for i in range(len(kept) - 1) if kept[i + 1] - kept[i] > 1)
    first, last = kept[gap] + 1, kept[gap + 1] - 1
    assert kept == [*range(1, first), *range(last + 1, 501)]  # one cut, in the middle
    n = last - first + 1
    assert [line for line in lines if line.startswith("[...")] == [
        f"[... {n} step(s) cut: steps {first}-{last} (tool_call {n}) ...]"
    ]
    # a trace that fits is shown whole
    assert numbers(trace_lines(check, conversation())) == list(range(1, 10))


def test_last_turns_shows_the_last_turns_and_says_what_came_before() -> None:
    check = JudgeCheck(question="Did it move the meeting?", trace={"last_turns": 1})
    lines = trace_lines(check, conversation())
    assert lines[0] == (
        "[... 6 step(s) not shown, before the last 1 turn(s): steps 1-6"
        " (user 2, tool_call 2, assistant 2) ...]"
    )
    assert numbers(lines) == [7, 8, 9]
    assert lines[1] == "[7] user: Make it 11 instead"


def test_tool_calls_only_and_step_kinds() -> None:
    tools = JudgeCheck(question="Right tools?", trace={"tool_calls_only": True})
    lines = trace_lines(tools, conversation())
    assert lines[0] == "[showing tool_call steps only: 3 of 9]"
    assert numbers(lines) == [2, 5, 8]
    said = JudgeCheck(question="Polite?", trace={"steps": ["user", "assistant"]})
    assert numbers(trace_lines(said, conversation())) == [1, 3, 4, 6, 7, 9]
    assert said.version == "judge-binary/1+plain@2+view(steps=user|assistant)"
    # both shapes of "tool calls only" are one view, one version
    same = JudgeCheck(question="Right tools?", trace={"steps": ["tool_call"]})
    assert same.version == tools.version


def test_every_judge_check_type_takes_the_view() -> None:
    view = {"max_steps": 4}
    graded = GradedJudgeCheck(trace=view)
    faithful = FaithfulnessCheck(trace=view)
    outcomes = ExpectedOutcomesCheck(path="ground_truth.outcomes", trace=view)
    for check in (graded, faithful, outcomes):
        assert check.version.endswith("+plain@2+view(max_steps=4)"), check.version
    # faithfulness checks the answer against the trace without it (step 500): 499 steps
    context = faithful.formatter.format_context(LONG)
    assert "[... 495 step(s) cut: steps 3-497 (tool_call 495) ...]" in context


@pytest.mark.parametrize(
    ("view", "message"),
    [
        ({"steps": ["tool"]}, "steps.0"),
        ({"tool_calls_only": True, "steps": ["user"]}, "give steps or tool_calls_only, not both"),
        ({"max_steps": 1}, "max_steps"),
        ({"last_n": 2}, "last_n"),
    ],
)
def test_a_bad_view_is_refused(view: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        JudgeCheck(question="Q?", trace=view)


def test_a_view_brings_a_long_trace_under_the_limit_in_a_run(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    text = suite.read_text().replace(
        "    question: Is every statement",
        "    trace: {max_steps: 40}\n    question: Is every statement",
    )
    suite.write_text(text)
    add_case(suite, long_case())
    with fake_llm_server([], default=Reply(YES)) as server:
        code, out = run_judged(suite, server, tmp_path, judge="openai:gpt-4o-mini")
        sent = [r["messages"][-1]["content"] for r in server.requests]
    assert code == 0, out
    assert len(sent) == CASES + 1
    assert sum("[... 460 step(s) cut: steps 21-480 (tool_call 460) ...]" in p for p in sent) == 1
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    run = store.get_run("latest")
    grounded = run.config["checks"]["grounded"]
    assert grounded["version"] == "judge-binary/1+plain@2+view(max_steps=40)"
    verdicts = [r.verdicts["grounded"].state for r in store.iter_results(run.id)]
    assert verdicts == [VerdictState.PASSED] * (CASES + 1)


def test_a_bad_view_in_a_suite_is_one_line_naming_the_field(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    text = suite.read_text().replace(
        "    question: Is every statement",
        "    trace: {steps: [tool]}\n    question: Is every statement",
    )
    suite.write_text(text)
    code, out = run_judged(suite, None, tmp_path)
    assert code == 2, out
    assert "Traceback" not in out
    assert out.strip().endswith(
        "suite.yaml:23: checks.grounded.trace.steps[0]: expected 'user', 'assistant',"
        " 'tool_call', 'system' or 'event', got 'tool'"
    ), out
    assert len(out.strip().splitlines()) == 1


def test_fields_show_the_paths_listed_in_place_of_the_final_state() -> None:
    check = JudgeCheck(
        question="Booked both?",
        trace={"fields": ["final_state.booking.participants", "metadata.channel"]},
    )
    prompt = check.request(LONG).messages[-1].content
    assert "<agent_final_state>" not in prompt
    assert (
        "<agent_fields>\n"
        'final_state.booking.participants: ["Alice", "Bob"]\n'
        "metadata.channel: (missing)\n"
        "</agent_fields>"
    ) in prompt
    assert check.version.endswith("+view(fields=final_state.booking.participants|metadata.channel)")
    probes = {p.path: p.held(LONG) for p in check.case_probes() if p.field == "trace.fields"}
    assert probes == {"final_state.booking.participants": True, "metadata.channel": False}


def test_a_bad_field_path_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"trace\.fields"):
        JudgeCheck(question="Q?", trace={"fields": ["final_state..booking"]})
