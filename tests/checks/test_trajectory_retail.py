"""What tau-bench's retail domain needs of ``trajectory_match``: argument lists compared in any
order (``unordered``), and one call per order kept when an agent corrects an earlier call
(``dedupe``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from checkweigh.checks import TrajectoryMatch
from checkweigh.core import Case, VerdictState
from checkweigh.errors import SuiteError
from checkweigh.suites import load_suite
from support.retail_cases import (
    BOTTLE,
    CARD,
    KEYBOARD,
    LAMP,
    NEW_BOTTLE,
    NEW_KEYBOARD,
    NEW_LAMP,
    NEW_THERMOSTAT,
    ORDER,
    PENDING,
    THERMOSTAT,
    WRONG_BOTTLE,
    action,
    exchange_case,
    modify_case,
    tool,
)

P, F = VerdictState.PASSED, VerdictState.FAILED
WRITES = {"name": ["exchange_delivered_order_items", "modify_pending_order_items"], "error": False}


def _check(**options: Any) -> TrajectoryMatch:
    return TrajectoryMatch(
        reference_path="ground_truth.actions", mode="unordered", select=WRITES, **options
    )


def _exchange(items: list[str], new: list[str]) -> Case:
    return Case.model_validate(exchange_case("retail-12", items, new))


def test_item_ids_in_another_order_match_only_when_unordered() -> None:
    swapped = _exchange([THERMOSTAT, KEYBOARD], [NEW_THERMOSTAT, NEW_KEYBOARD])
    ordered = _check().evaluate(swapped)
    assert ordered.state is F
    assert ordered.reason == (
        "missing call exchange_delivered_order_items(order_id='#W2378156', ...): closest call "
        "(step 7) differs at item_ids[0]: '4983901480' vs expected '1151293680' (unordered: 1 "
        "missing, 1 extra)"
    )
    loose = _check(unordered=["item_ids", "new_item_ids"]).evaluate(swapped)
    assert (loose.state, loose.reason) == (
        P,
        "trajectory ['exchange_delivered_order_items'] matches (unordered)",
    )
    # the same, for that tool only
    override = {"exchange_delivered_order_items": {"unordered": ["item_ids", "new_item_ids"]}}
    assert _check(overrides=override).evaluate(swapped).state is P
    # another tool's override leaves the exchange compared in order
    other = {"modify_pending_order_items": {"unordered": ["item_ids", "new_item_ids"]}}
    assert _check(overrides=other).evaluate(swapped).state is F


def test_unordered_lists_are_multisets_and_name_the_item_that_differs() -> None:
    check = _check(unordered=["item_ids", "new_item_ids"])
    # the keyboard twice, the thermostat never: the same length, not the same items
    twice = check.evaluate(_exchange([KEYBOARD, KEYBOARD], [NEW_KEYBOARD, NEW_THERMOSTAT]))
    assert twice.state is F
    assert "differs at item_ids[1]: '1151293680' vs expected '4983901480'" in twice.reason
    short = check.evaluate(_exchange([THERMOSTAT], [NEW_THERMOSTAT, NEW_KEYBOARD]))
    assert short.state is F
    assert "differs at item_ids: ['4983901480'] vs expected" in short.reason
    # each path is a multiset of its own: the pairing of item_ids with new_item_ids is not kept
    crossed = check.evaluate(_exchange([THERMOSTAT, KEYBOARD], [NEW_KEYBOARD, NEW_THERMOSTAT]))
    assert crossed.state is P


def test_unordered_items_pair_recursively_under_the_argument_mode() -> None:
    # objects in the list: paired one to one, each compared by arguments_mode (superset: the
    # call's items may carry more keys than the reference's)
    items = [
        {"item_id": BOTTLE, "options": {"capacity": "750ml", "color": "red"}},
        {"item_id": LAMP, "options": {"bulb": "LED"}},
    ]
    call = tool("modify_pending_order_items", order_id=PENDING, items=items)
    expected = [
        {"item_id": LAMP, "options": {"bulb": "LED"}},
        {"item_id": BOTTLE, "options": {"color": "red"}},
    ]
    case = Case.model_validate(
        {
            "id": "retail-30",
            "trace": [call],
            "ground_truth": {
                "actions": [action("modify_pending_order_items", order_id=PENDING, items=expected)]
            },
        }
    )
    assert _check(arguments_mode="superset").evaluate(case).state is F
    assert _check(arguments_mode="superset", unordered=["items"]).evaluate(case).state is P
    # exact: the bottle's extra option (capacity) is now a difference
    exact = _check(arguments_mode="exact", unordered=["items"]).evaluate(case)
    assert exact.state is F
    assert "differs at items[1].options.capacity: '750ml' not expected" in exact.reason


def test_a_corrected_call_counts_once_its_correction_is_kept() -> None:
    corrected = Case.model_validate(modify_case("retail-41", corrected=True))
    plain = _check().evaluate(corrected)
    assert plain.state is F
    assert plain.reason.startswith("extra call modify_pending_order_items(order_id='#W4817420'")
    last = _check(dedupe={"key": "arguments.order_id", "keep": "last"}).evaluate(corrected)
    assert (last.state, last.reason) == (
        P,
        "trajectory ['modify_pending_order_items'] matches (unordered)",
    )
    first = _check(dedupe={"key": "arguments.order_id", "keep": "first"}).evaluate(corrected)
    assert first.state is F
    assert f"differs at new_item_ids[1]: '{WRONG_BOTTLE}' vs expected '{NEW_BOTTLE}'" in (
        first.reason
    )
    # a single call is left as it is
    once = Case.model_validate(modify_case("retail-42", corrected=False))
    assert _check(dedupe={"key": "arguments.order_id"}).evaluate(once).state is P


def test_dedupe_keeps_a_call_per_tool_and_calls_without_the_key() -> None:
    # every call counts here (no select): reads share the order id with the write, and a
    # call without an order id is kept as it is
    modify = modify_case("retail-43", corrected=True)
    modify["ground_truth"]["actions"] = [
        action("find_user_id_by_name_zip", first_name="Yusuf", last_name="Rossi", zip="19122"),
        action("get_user_details", user_id="yusuf_rossi_9620"),
        action("get_order_details", order_id=PENDING),
        action(
            "modify_pending_order_items",
            order_id=PENDING,
            item_ids=[LAMP, BOTTLE],
            new_item_ids=[NEW_LAMP, NEW_BOTTLE],
            payment_method_id=CARD,
        ),
    ]
    case = Case.model_validate(modify)
    check = TrajectoryMatch(
        reference_path="ground_truth.actions", mode="strict", dedupe={"key": "arguments.order_id"}
    )
    assert check.evaluate(case).state is P  # the read of the order stays beside the write
    strict = TrajectoryMatch(reference_path="ground_truth.actions", mode="strict")
    assert strict.evaluate(case).reason == (
        "call 4 (step 5) modify_pending_order_items differs at new_item_ids[1]: "
        f"'{WRONG_BOTTLE}' vs expected '{NEW_BOTTLE}' (strict)"
    )


@settings(max_examples=200, deadline=None)
@given(
    items=st.lists(st.sampled_from([KEYBOARD, THERMOSTAT, LAMP, BOTTLE]), min_size=1, max_size=6),
    other=st.lists(st.sampled_from([KEYBOARD, THERMOSTAT, LAMP, BOTTLE]), min_size=1, max_size=6),
    seed=st.randoms(use_true_random=False),
)
def test_unordered_matches_exactly_when_the_lists_are_equal_as_multisets(
    items: list[str], other: list[str], seed: Any
) -> None:
    shuffled = list(items)
    seed.shuffle(shuffled)
    check = TrajectoryMatch(reference_path="ground_truth.actions", unordered=["item_ids"])

    def verdict(made: list[str]) -> VerdictState:
        case = {
            "id": "retail-p",
            "trace": [tool("return_delivered_order_items", order_id=ORDER, item_ids=made)],
            "ground_truth": {
                "actions": [action("return_delivered_order_items", order_id=ORDER, item_ids=items)]
            },
        }
        return check.evaluate(Case.model_validate(case)).state

    assert verdict(shuffled) is P
    assert verdict(other) is (P if Counter(other) == Counter(items) else F)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"dedupe": {"key": "order_id"}}, "must be a path into the call's arguments"),
        ({"dedupe": {"key": "arguments.items[*].id"}}, "must name one value, not [*]"),
        ({"dedupe": {"key": "arguments.order_id", "keep": "latest"}}, "'last' or 'first'"),
        ({"unordered": ["items[x]"]}, "malformed argument path 'items[x]'"),
        ({"overrides": {"exchange": {"unordered": ["a..b"]}}}, "malformed argument path 'a..b'"),
    ],
)
def test_bad_retail_options_are_rejected(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        TrajectoryMatch.model_validate({"reference_path": "ground_truth.actions", **spec})
    assert message in str(info.value)


def test_a_bad_dedupe_key_in_a_suite_is_one_line_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text("")
    (tmp_path / "suite.yaml").write_text(
        "name: retail\n"
        "cases: cases.jsonl\n"
        "checks:\n"
        "  writes:\n"
        "    type: trajectory_match\n"
        "    reference_path: ground_truth.actions\n"
        "    dedupe:\n"
        "      key: order_id\n"
        "rubrics:\n"
        "  reward:\n"
        "    weights: {writes: 1}\n"
    )
    with pytest.raises(SuiteError) as raised:
        load_suite(tmp_path / "suite.yaml")
    text = str(raised.value)
    assert text.startswith(f"{tmp_path / 'suite.yaml'}:8: checks.writes.dedupe.key: ")
    assert "must be a path into the call's arguments, e.g. arguments.order_id" in text
    assert "\n" not in text
