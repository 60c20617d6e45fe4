"""The run configuration as a versioned model, and telling runs judged differently apart."""

from __future__ import annotations

from typing import Any

import pytest

from checkweigh.core import CONFIG_VERSION, RunConfig, judging_differences, read_config


def _config(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "schema_version": CONFIG_VERSION,
        "suite": "support",
        "checks": {
            "polite": {
                "version": "judge-binary/1+plain@1",
                "spec": {"type": "judge", "question": "Is the reply polite?"},
                "when": [],
            },
            "looked_up": {"version": "1", "spec": {"type": "tool_called"}, "when": []},
        },
        "judge": "openai:gpt-4o-mini",
        "judge_mode": "single",
        "judge_options": {"format": "auto", "timeout_s": 60.0, "concurrency": None},
        "graded_weights": {},
    }
    base.update(changes)
    return base


def test_alike_runs_have_no_differences_whatever_their_concurrency_or_timeouts() -> None:
    slower = _config(judge_options={"format": "auto", "timeout_s": 5.0, "concurrency": 2})
    assert judging_differences(_config(), slower) == []


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"judge": "anthropic:claude-haiku"},
            "judge openai:gpt-4o-mini in the base, anthropic:claude-haiku in the candidate",
        ),
        ({"judge": None}, "judge openai:gpt-4o-mini in the base, none in the candidate"),
        ({"judge_mode": "batch"}, "judge mode single in the base, batch in the candidate"),
        (
            {"judge_options": {"format": "prompt"}},
            "judge format auto in the base, prompt in the candidate",
        ),
        ({"graded_weights": {"faithfulness": 2.0}}, "graded metric weights overridden differently"),
    ],
)
def test_a_different_judge_or_judge_setting_is_named(
    changes: dict[str, Any], expected: str
) -> None:
    assert judging_differences(_config(), _config(**changes)) == [expected]


def test_a_check_with_another_version_or_entry_is_named() -> None:
    cand = _config()
    cand["checks"] = {
        "polite": {
            "version": "judge-binary/1+plain@2",
            "spec": {"type": "judge", "question": "Is the reply polite?"},
        },
        "looked_up": {"version": "1", "spec": {"type": "tool_called", "step": {"name": "x"}}},
        "only_here": {"version": "1", "spec": {}},
    }
    assert judging_differences(_config(), cand) == [
        "check 'looked_up' configured differently (its suite entry changed)",
        "check 'polite' version judge-binary/1+plain@1 in the base, "
        "judge-binary/1+plain@2 in the candidate",
    ]


def test_configurations_stored_before_the_model_still_read() -> None:
    old = {"suite": "support", "rubrics": [], "judge": None, "anything": {"kept": True}}
    config = read_config(old)
    assert config.schema_version == 1
    assert config.model_extra == {"anything": {"kept": True}}
    assert read_config({"checks": "not a mapping"}) == RunConfig()
    assert judging_differences(old, old) == []
