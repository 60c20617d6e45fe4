"""``missing:``: what a check answers on a case without its expectation, and the paths a run
watches (``PathWatch``) to name those no case held."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from checkweigh.checks import Contains, Equals, OneOf, PathWatch, SetEquals, TrajectoryMatch
from checkweigh.core import Case, VerdictState
from checkweigh.errors import SuiteError
from checkweigh.suites import load_suite
from support.retail_cases import (
    KEYBOARD,
    NEW_KEYBOARD,
    NEW_THERMOSTAT,
    THERMOSTAT,
    exchange_case,
    modify_case,
)

P, F, NA, E = (
    VerdictState.PASSED,
    VerdictState.FAILED,
    VerdictState.NOT_APPLICABLE,
    VerdictState.ERRORED,
)


def _exchange() -> Case:
    return Case.model_validate(
        exchange_case("retail-1", [KEYBOARD, THERMOSTAT], [NEW_KEYBOARD, NEW_THERMOSTAT])
    )


CHECKS: list[tuple[str, type[Any], dict[str, Any], str]] = [
    (
        "equals",
        Equals,
        {"path": "final_state.order_status", "expected_path": "ground_truth.order_status"},
        "no expectation at ground_truth.order_status",
    ),
    (
        "set_equals",
        SetEquals,
        {"path": "trace[6].arguments.item_ids", "expected_path": "ground_truth.items"},
        "no expectation at ground_truth.items",
    ),
    (
        "one_of",
        OneOf,
        {"path": "final_state.order_status", "values_path": "ground_truth.statuses"},
        "no values at ground_truth.statuses",
    ),
    (
        "contains",
        Contains,
        {"path": "output", "values_path": "ground_truth.must_say"},
        "no values at ground_truth.must_say",
    ),
    (
        "trajectory_match",
        TrajectoryMatch,
        {"reference_path": "ground_truth.write_action"},
        "no reference at ground_truth.write_action",
    ),
]


@pytest.mark.parametrize(("kind", "cls", "options", "why"), CHECKS, ids=[c[0] for c in CHECKS])
def test_missing_chooses_the_verdict_of_a_case_without_its_expectation(
    kind: str, cls: type[Any], options: dict[str, Any], why: str
) -> None:
    case = _exchange()
    default = cls(**options).evaluate(case)
    assert (default.state, default.reason) == (NA, why)  # today's behaviour, kept by default
    failed = cls(**options, missing="fail").evaluate(case)
    assert (failed.state, failed.reason) == (F, why)
    errored = cls(**options, missing="error").evaluate(case)
    assert (errored.state, errored.error) == (E, why)
    # a case that holds it is judged as before, whatever ``missing`` says
    if kind == "trajectory_match":
        held = cls(reference_path="ground_truth.actions", mode="superset", missing="fail")
        assert held.evaluate(case).state is P


def test_missing_applies_only_to_an_expectation_read_from_the_case() -> None:
    with pytest.raises(ValidationError, match="'missing' applies to an expectation read"):
        Equals(path="final_state.order_status", value="delivered", missing="fail")
    with pytest.raises(ValidationError, match="'missing' applies"):
        TrajectoryMatch(reference=["get_order_details"], missing="error")


def test_a_bad_missing_is_one_line_naming_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text("")
    (tmp_path / "suite.yaml").write_text(
        "name: retail\n"
        "cases: cases.jsonl\n"
        "checks:\n"
        "  writes:\n"
        "    type: trajectory_match\n"
        "    reference_path: ground_truth.actions\n"
        "    missing: skip\n"
        "rubrics:\n"
        "  reward:\n"
        "    weights: {writes: 1}\n"
    )
    with pytest.raises(SuiteError) as raised:
        load_suite(tmp_path / "suite.yaml")
    assert str(raised.value) == (
        f"{tmp_path / 'suite.yaml'}:7: checks.writes.missing: expected 'not_applicable', 'fail' "
        "or 'error', got 'skip'"
    )


def test_a_path_is_watched_until_some_case_holds_it() -> None:
    checks = {
        "writes": TrajectoryMatch(
            reference_path="ground_truth.actions",
            overrides={
                "modify_pending_order_items": {"compare": ["item_ids", "new_item_ids[*]"]},
                "return_delivered_order_items": {"ignore": ["payment_method_id"]},
                "exchange_delivered_order_items": {"ignore": ["payment_method"]},
            },
        ),
        "status": Equals(path="final_state.order_status", expected_path="ground_truth.status"),
    }
    watch = PathWatch.of((name, check, ()) for name, check in checks.items())
    assert watch.unheld() == []  # no case seen: nothing to say
    watch.see(_exchange())
    assert watch.unheld() == [
        ("writes", "overrides key", "modify_pending_order_items"),
        ("writes", "overrides key", "return_delivered_order_items"),
        ("writes", "overrides.exchange_delivered_order_items.ignore", "payment_method"),
        ("status", "expected_path", "ground_truth.status"),
    ]
    watch.see(Case.model_validate(modify_case("retail-2", corrected=True)))
    seen_here = watch.chunk()
    assert watch.unheld() == [
        ("writes", "overrides key", "return_delivered_order_items"),
        ("writes", "overrides.exchange_delivered_order_items.ignore", "payment_method"),
        ("status", "expected_path", "ground_truth.status"),
    ]
    # the driver of worker processes: it saw no case, and learns from their chunks
    driver = PathWatch.of((name, check, ()) for name, check in checks.items())
    other = PathWatch.of((name, check, ()) for name, check in checks.items())
    held_status = Case.model_validate(
        {**modify_case("retail-3", corrected=False), "ground_truth": {"status": "pending"}}
    )
    other.see(held_status)
    driver.absorb(seen_here)
    driver.absorb(other.chunk())
    driver.absorb((0, ()))  # a chunk that scored no case says nothing
    assert driver.unheld() == [
        ("writes", "overrides key", "return_delivered_order_items"),
        ("writes", "overrides.exchange_delivered_order_items.ignore", "payment_method"),
    ]
