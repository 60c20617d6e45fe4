"""Rules a suite's cases and target must keep together, checked before a run starts: a
simulated user needs a model, a body template that reads ``{{messages}}`` or ``{{turn}}``
needs every case to be a conversation, a ``user`` is scripted or simulated, never both; and an
HTTP target's URL from the environment is checked when the suite loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checkweigh.errors import CaseFileError, SuiteError
from checkweigh.suites import check_conversations, count_cases, load_suite
from checkweigh.suites._conversations import conversation_reads

SUITE = """\
name: desk
cases: {cases}
target:
  kind: http
  url: {url}
{body}checks:
  booked: {{type: equals, path: final_state.booked, value: true}}
rubrics:
  r: {{weights: {{booked: 1}}}}
"""
SCRIPTED = {"id": "s1", "input": "hi", "user": {"turns": ["Book Alice at 10:00", "thanks"]}}
SIMULATED = {"id": "g1", "input": "hi", "user": {"goal": "Book Alice at 10:00"}}
SINGLE = {"id": "one", "input": {"message": "Book Alice at 10:00"}}


def _suite(
    folder: Path,
    cases: list[dict[str, Any]],
    *,
    body: str = "",
    url: str = "http://127.0.0.1:9/agent",
    yaml_cases: bool = False,
) -> Path:
    if yaml_cases:
        name = "cases.yaml"
        (folder / name).write_text(json.dumps(cases))  # JSON is YAML
    else:
        name = "cases.jsonl"
        (folder / name).write_text("".join(json.dumps(c) + "\n" for c in cases))
    (folder / "suite.yaml").write_text(SUITE.format(cases=name, url=url, body=body))
    return folder / "suite.yaml"


MESSAGES_BODY = '  body: {history: "{{messages}}", session: "eval-{{id}}-{{repeat}}"}\n'


def test_a_body_reading_messages_refuses_the_first_case_without_a_user(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path, [SCRIPTED, SINGLE, SCRIPTED], body=MESSAGES_BODY))
    with pytest.raises(CaseFileError) as caught:
        check_conversations(suite, judge=True)
    assert str(caught.value) == (
        f"{tmp_path / 'cases.jsonl'}:2: user: case 'one' has no user, but target.body in "
        "suite.yaml reads {{messages}}, which only the turns of a conversation send; give the "
        "case a user: block, or read {{input}}"
    )
    # every case a conversation: nothing to refuse
    check_conversations(load_suite(_suite(tmp_path, [SCRIPTED], body=MESSAGES_BODY)), judge=True)
    # the same body over single calls that read only {{input}}: fine
    plain = '  body: {q: "{{input.message}}", session: "eval-{{id}}-{{repeat}}"}\n'
    check_conversations(load_suite(_suite(tmp_path, [SINGLE], body=plain)), judge=False)


def test_conversation_reads_finds_messages_and_turn_wherever_they_are() -> None:
    assert conversation_reads({"a": ["x {{ turn }} y"]}) == "{{ turn }}"
    assert conversation_reads({"last": "{{messages[-1].content}}"}) == "{{messages[-1].content}}"
    assert conversation_reads({"q": "{{input}}", "n": "{{repeat}}"}) is None
    assert conversation_reads(None) is None


@pytest.mark.parametrize("yaml_cases", [False, True], ids=["jsonl", "yaml"])
def test_a_simulated_user_without_a_model_needs_a_judge(tmp_path: Path, yaml_cases: bool) -> None:
    named = {**SIMULATED, "id": "g2", "user": {"goal": "x", "model": "openai:gpt-4o-mini"}}
    cases = [SINGLE, SCRIPTED, named, SIMULATED]
    suite = load_suite(_suite(tmp_path, cases, yaml_cases=yaml_cases))
    check_conversations(suite, judge=True)  # the run's judge plays it
    with pytest.raises(CaseFileError) as caught:
        check_conversations(suite, judge=False)
    where = f"{tmp_path / 'cases.yaml'}: " if yaml_cases else f"{tmp_path / 'cases.jsonl'}:4: "
    assert str(caught.value) == (
        f"{where}user.model: a simulated user needs a model: run with --judge "
        "PROVIDER:MODEL, or set user.model in the case"
    )
    check_conversations(load_suite(_suite(tmp_path, cases[:3])), judge=False)


def test_a_user_with_both_turns_and_goal_is_refused_with_the_rule(tmp_path: Path) -> None:
    both = {"id": "both", "input": "hi", "user": {"turns": ["hi"], "goal": "book"}}
    _suite(tmp_path, [SCRIPTED, both])
    with pytest.raises(CaseFileError) as caught:
        count_cases(tmp_path / "cases.jsonl")
    assert str(caught.value) == (
        f"{tmp_path / 'cases.jsonl'}:2: user: 'turns' (a scripted user) and 'goal' (a "
        "simulated user) cannot both be given; keep one"
    )


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (
            "localhost:8080/agent?key=s3cr3t",
            "target.url: ${AGENT_URL} from the environment gives 'localhost:8080/agent': "
            "expected an http:// or https:// URL, got 'localhost:8080/agent'",
        ),
        (
            "http://user:pa55@:8080/agent",
            "target.url: ${AGENT_URL} from the environment gives 'http://***@:8080/agent': "
            "expected a host in the URL",
        ),
    ],
)
def test_a_url_variable_that_makes_a_bad_url_names_the_variable_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, said: str
) -> None:
    monkeypatch.setenv("AGENT_URL", value)
    path = _suite(tmp_path, [SINGLE], url="${AGENT_URL}")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert str(caught.value).startswith(f"{path}:5: {said}")
    assert "s3cr3t" not in str(caught.value)
    assert "pa55" not in str(caught.value)
    # a replay calls no agent: its URL is not read
    load_suite(path, load_agent=False)
    # unset, it is said when the run starts (the target reads it then)
    monkeypatch.delenv("AGENT_URL")
    load_suite(path)
