"""Catalogue: bad ``user`` blocks and conversation faults against the real ``checkweigh run``.

Each row is a realistic mistake or fault with its exact outcome. A bad block in a cases file or
suite is one line naming the file, line and field, exit 2, no traceback, nothing stored. An
agent or a simulated user that fails mid-conversation errors that case only (never a "no"
verdict), the run finishes, and the stored case keeps the conversation up to the failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkweigh.cli import app
from checkweigh.core import Case
from checkweigh.store import Store
from checkweigh.testing import Reply, fake_llm_server, scripted_users
from support.conversation_suite import scripted, simulated, write_desk

GOAL = "Book a review with Alice at 10:00"
OK = scripted(
    "fine",
    ["Book the review at 10:00"],
    time="10:00",
    stop_reason="script_end",
    last_reply="Booked at 10:00.",
)


def _run(suite: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    base = {"COLUMNS": "200", "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache")}
    return CliRunner().invoke(
        app, ["run", str(suite), "--db", db, "-q", *args], env=base | (env or {})
    )


# --- bad user blocks: exit 2, one line -----------------------------------------------------


@pytest.mark.parametrize(
    ("user", "message"),
    [
        ({"turns": []}, "cases.jsonl:2: user.turns: expected at least 1 entry, got 0"),
        (
            {"turns": ["hi", ""]},
            "cases.jsonl:2: user.turns[1]: String should have at least 1 character",
        ),
        (
            {"goal": "book", "persna": "terse"},
            "cases.jsonl:2: user.persna: unknown key 'persna'; did you mean 'persona'?",
        ),
        (
            "Book Alice at 10:00",
            "cases.jsonl:2: user: expected 'turns' (a scripted user) or 'goal' (a simulated "
            "user, with persona)",
        ),
        (
            {"persona": "terse"},
            "cases.jsonl:2: user: expected 'turns' (a scripted user) or 'goal'",
        ),
        (
            {"goal": "book", "max_turns": 0},
            "cases.jsonl:2: user.max_turns: input should be greater than or equal to 1",
        ),
        (
            {"goal": "book", "model": "gpt-4o"},
            "cases.jsonl:2: user.model: expected 'provider:model', e.g. openai:gpt-4o-mini; "
            "got 'gpt-4o'",
        ),
        (
            {"turns": ["hi"], "goal": "book"},
            "cases.jsonl:2: user: 'turns' (a scripted user) and 'goal' (a simulated user) "
            "cannot both be given; keep one",
        ),
    ],
)
def test_a_bad_user_block_is_one_line_and_exit_2(tmp_path: Path, user: Any, message: str) -> None:
    suite = write_desk(tmp_path / "s", [OK, {"id": "bad", "input": "hi", "user": user}])
    result = _run(suite, tmp_path)
    out = result.stdout + result.stderr
    assert result.exit_code == 2, out
    assert message in out
    assert "Traceback" not in out
    assert len(out.strip().splitlines()) == 1


def test_a_simulated_user_without_any_model_is_refused_before_the_run(tmp_path: Path) -> None:
    cases = [OK, simulated("no-model", GOAL)]
    suite = write_desk(tmp_path / "s", cases)
    result = _run(suite, tmp_path)
    out = result.stdout + result.stderr
    assert result.exit_code == 2, out
    assert (
        "cases.jsonl:2: user.model: a simulated user needs a model: run with --judge "
        "PROVIDER:MODEL, or set user.model in the case"
    ) in out
    assert len(out.strip().splitlines()) == 1
    assert not (tmp_path / "runs.db").exists()  # refused before anything was stored


def test_a_bad_max_turns_in_the_suite_is_one_line_and_exit_2(tmp_path: Path) -> None:
    suite = write_desk(tmp_path / "s", [OK])
    suite.write_text(suite.read_text().replace("max_turns: 10", "max_turns: 0"))
    result = _run(suite, tmp_path)
    out = result.stdout + result.stderr
    assert result.exit_code == 2, out
    assert "target.max_turns: input should be greater than or equal to 1" in out
    assert "Traceback" not in out


# --- faults mid-conversation: that case errored, the run finished ---------------------------


@dataclass
class Fault:
    case: dict[str, Any]
    error: str
    """A fragment of the errored case's agent_error."""
    kept_users: list[str]
    """The user messages the stored case still holds."""
    kept_turns: int = 0
    """Finished turns recorded in the kept case's final state (None: no conversation kept)."""
    judge: list[Reply] | None = None
    """The simulator's (judge's) replies, when the case has a simulated user."""
    args: list[str] = field(default_factory=list)
    timeout_s: float | None = None


FAULTS = {
    "agent fails at turn 2 (the third)": Fault(
        scripted("crash", ["Book at 10:00", "No, 11:00 please", "crash it", "thanks"]),
        "turn 2: agent raised RuntimeError: calendar API unreachable",
        ["Book at 10:00", "No, 11:00 please", "crash it"],
        kept_turns=2,
    ),
    "agent hangs at turn 1 past the time limit": Fault(
        scripted("hang", ["Book at 10:00", "hang on a second"]),
        "agent timed out after 1.5s; at turn 1",
        [],
        timeout_s=1.5,
    ),
    "simulator provider answers 500": Fault(
        simulated("sim-500", GOAL),
        "turn 0: simulated user (openai:user-sim) failed:",
        [],
        judge=[Reply(status=500)],
        args=["--judge", "openai:user-sim", "--judge-retries", "0"],
    ),
    "simulator answers junk twice": Fault(
        simulated("sim-junk", GOAL),
        "turn 0: simulated user (openai:user-sim) failed: invalid judge answer after one repair",
        [],
        judge=[Reply("Sure! Here is the next message: hello"), Reply("hello")],
        args=["--judge", "openai:user-sim"],
    ),
    "simulator breaks down at turn 1": Fault(
        simulated("sim-turn2", GOAL),
        "turn 1: simulated user (openai:user-sim) gave an empty message without done",
        [GOAL],
        kept_turns=1,
        judge=[Reply(json.dumps({"done": False, "message": GOAL})), Reply('{"done": false}')],
        args=["--judge", "openai:user-sim"],
    ),
    "simulated user names a provider that does not exist": Fault(
        {**simulated("bad-provider", GOAL), "user": {"goal": GOAL, "model": "acme:sim-1"}},
        "turn 0: simulated user model 'acme:sim-1': expected PROVIDER:MODEL",
        [],
    ),
}


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_a_fault_mid_conversation_errors_only_its_case(tmp_path: Path, fault: Fault) -> None:
    suite = write_desk(tmp_path / "s", [OK, fault.case], timeout_s=fault.timeout_s)
    with fake_llm_server(fault.judge or [], respond=None) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
        result = _run(suite, tmp_path, *fault.args, env=env)
    out = result.stdout + result.stderr
    assert result.exit_code in (0, 1), out  # the run finished; the gates decide
    assert "Traceback" not in out
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    run = store.get_run("latest")
    assert run.status.value == "complete"
    fine, broken = store.iter_results(run.id, with_cases=True)
    assert (fine.case_id, fine.agent_error) == ("fine", None)
    assert all(v.state.value == "passed" for v in fine.verdicts.values())
    assert broken.agent_error is not None
    assert fault.error in broken.agent_error
    assert broken.verdicts == {}  # errored, never a "no"
    kept = Case.model_validate_json(broken.body or b"{}")
    assert [s.content for s in kept.trace if s.kind == "user"] == fault.kept_users
    if fault.kept_users:
        assert kept.final_state["conversation"] == {
            "stop_reason": "agent_error",
            "turns": fault.kept_turns,
        }
    if fault.kept_turns:
        assert len(kept.turns) == len(fault.kept_users)


def test_a_scripted_user_drives_every_case_while_some_fail(tmp_path: Path) -> None:
    """Many conversations at once, some broken: each finished one is whole and in order."""
    cases = [
        scripted(f"c{i}", [f"Book at {9 + i % 5}:00", f"make it {9 + i % 5}:30"], time=None)
        for i in range(12)
    ]
    cases[4] = scripted("c4", ["Book at 10:00", "crash"])
    cases[9] = simulated("c9", GOAL)
    suite = write_desk(tmp_path / "s", cases)
    with fake_llm_server([], respond=scripted_users({GOAL: ["Alice at 10:00 please"]})) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
        result = _run(suite, tmp_path, "--judge", "openai:user-sim", env=env)
    assert result.exit_code in (0, 1), result.output
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    results = list(store.iter_results(store.get_run("latest").id, with_cases=True))
    assert [r.case_id for r in results] == [f"c{i}" for i in range(12)]
    assert [i for i, r in enumerate(results) if r.agent_error] == [4]
    for i, r in enumerate(results):
        case = Case.model_validate_json(r.body or b"{}")
        if i == 9:
            assert [t.output for t in case.turns] == ["Booked at 10:00."]
            assert case.final_state["conversation"]["stop_reason"] == "user_done"
        elif i != 4:
            hour = 9 + i % 5
            assert [t.output for t in case.turns] == [
                f"Booked at {hour}:00.",
                f"Booked at {hour}:30.",
            ]
