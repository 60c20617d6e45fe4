"""Every built-in check type's version, pinned: a change of what a check answers must bump its
version (so ``compare`` flags runs judged differently) and say so in CHANGELOG.md. Changing a
version here without a CHANGELOG line, or a check's meaning without a version, is the mistake
this table is for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkweigh.checks import TrajectoryMatch
from checkweigh.cli import app
from checkweigh.suites import BUILTIN_CHECKS, load_suite
from support.retail_cases import KEYBOARD, NEW_KEYBOARD, exchange_case

# type -> (the smallest suite entry, its version). A judge check's version also names the
# trace formatter it reads (``+plain@2``: 2 since the final answer leaves out text sent
# together with tool calls).
PINNED: dict[str, tuple[dict[str, Any], str]] = {
    "equals": ({"path": "output", "value": "ok"}, "1"),
    "one_of": ({"path": "output", "values": ["ok"]}, "1"),
    "contains": ({"path": "output", "values": ["ok"]}, "1"),
    "regex": ({"path": "output", "pattern": "ok"}, "1"),
    "set_equals": ({"path": "final_state.items", "value": ["a"]}, "1"),
    "within_tolerance": ({"path": "final_state.total", "value": 1}, "1"),
    "length": ({"path": "output", "min": 1}, "1"),
    "word_count": ({"path": "output", "min": 1}, "1"),
    "json_schema": ({"path": "output", "json_schema": {"type": "object"}}, "1"),
    "tool_called": ({"step": "get_order_details"}, "2"),
    "before": ({"first": "get_order_details", "then": "cancel_pending_order"}, "2"),
    "within_first": ({"step": "get_order_details", "n": 3}, "2"),
    "never_after": ({"step": "cancel_pending_order", "after": "transfer_to_human_agents"}, "2"),
    "count": ({"step": "get_order_details", "max": 3}, "2"),
    # 2: subset/superset compare the calls as multisets (repeats count), arguments compared
    "trajectory_match": ({"reference": ["get_order_details"]}, "2"),
    "python": ({"function": "json:dumps"}, "1"),
    "judge": ({"question": "Is the reply polite?"}, "judge-binary/1+plain@2"),
    "expected_outcomes": ({}, "expected-outcomes/1+plain@2"),
    "faithfulness": ({}, "faithfulness/1+plain@2"),
    "goal_accuracy": ({}, "goal-accuracy/1-without-reference+plain@2"),
    "graded": ({}, "graded-scale/1+plain@2"),
}


def test_every_builtin_type_is_pinned() -> None:
    assert set(BUILTIN_CHECKS.names()) == set(PINNED)


@pytest.mark.parametrize("kind", sorted(PINNED))
def test_builtin_check_versions_are_pinned(kind: str) -> None:
    spec, version = PINNED[kind]
    check = BUILTIN_CHECKS.adapter().validate_python({"type": kind, **spec})
    assert check.version == version


def test_changelog_names_every_version_above_the_first() -> None:
    changelog = (Path(__file__).parents[2] / "CHANGELOG.md").read_text()
    assert changelog.startswith("# Changelog")
    assert "## Unreleased" in changelog
    for kind, (_, version) in PINNED.items():
        if version == "2":
            assert f"`{kind}` version 2" in changelog, kind


SUITE = """\
name: retail-writes
cases: cases.jsonl
checks:
  expected_writes:
    type: trajectory_match
    reference_path: ground_truth.actions
    mode: superset
rubrics:
  reward:
    weights: {expected_writes: 1}
"""


def test_compare_flags_a_run_judged_by_the_set_based_trajectory_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [exchange_case(f"retail-{i}", [KEYBOARD], [NEW_KEYBOARD]) for i in range(3)]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "suite.yaml").write_text(SUITE)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    runner = CliRunner()
    # the base: a run stored by a checkweigh whose trajectory_match was version 1 (subset and
    # superset compared sets of names), as its configuration records it
    with monkeypatch.context() as patched:
        patched.setattr(TrajectoryMatch, "version", "1")
        assert load_suite(tmp_path / "suite.yaml").checks["expected_writes"].version == "1"
        base = runner.invoke(app, ["run", str(tmp_path / "suite.yaml"), "--db", db, "-q"])
    assert base.exit_code in (0, 1), base.stderr
    cand = runner.invoke(app, ["run", str(tmp_path / "suite.yaml"), "--db", db, "-q"])
    assert cand.exit_code in (0, 1), cand.stderr
    done = runner.invoke(app, ["compare", "previous", "latest", "--db", db])
    assert done.exit_code == 0, done.stderr
    assert (
        "warning: the runs were judged differently (check 'expected_writes' version 1 in the "
        "base, 2 in the candidate): a change may be the judge's, not the agent's"
    ) in " ".join(done.stderr.split())
    strict = runner.invoke(app, ["compare", "previous", "latest", "--db", db, "--strict"])
    assert strict.exit_code == 1
