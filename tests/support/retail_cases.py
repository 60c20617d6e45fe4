"""tau-bench retail runs as checkweigh cases: a customer asks to exchange delivered items or to
change a pending order; ``ground_truth.actions`` holds the benchmark's expected calls in its
``{name, kwargs}`` shape (reads and writes mixed)."""

from __future__ import annotations

import json
from typing import Any

USER_ID = "yusuf_rossi_9620"
ORDER = "#W2378156"
PENDING = "#W4817420"
CARD = "credit_card_9513926"
# item ids as tau-bench's retail database spells them: a keyboard and a thermostat delivered,
# exchanged for other variants of the same products
KEYBOARD, THERMOSTAT = "1151293680", "4983901480"
NEW_KEYBOARD, NEW_THERMOSTAT = "7706410293", "7747408585"
# a pending order's lamp and bottle, changed to other variants
LAMP, BOTTLE = "5925362855", "3453331371"
NEW_LAMP, NEW_BOTTLE, WRONG_BOTTLE = "1569765161", "2439754078", "7843064651"


def tool(name: str, result: Any = None, error: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """A tool call step as tau-bench logs it (the result as JSON text)."""
    step: dict[str, Any] = {"kind": "tool_call", "name": name, "arguments": kwargs}
    step["result"] = error if error is not None else json.dumps(result or {"status": "ok"})
    if error is not None:
        step["error"] = error
    return step


def action(name: str, **kwargs: Any) -> dict[str, Any]:
    """An expected call, tau-bench's ``{name, kwargs}``."""
    return {"name": name, "kwargs": kwargs}


def _lookups(order: str) -> list[dict[str, Any]]:
    return [
        tool("find_user_id_by_name_zip", first_name="Yusuf", last_name="Rossi", zip="19122"),
        tool("get_user_details", user_id=USER_ID),
        tool("get_order_details", order_id=order),
    ]


def exchange_case(case_id: str, item_ids: list[str], new_item_ids: list[str]) -> dict[str, Any]:
    """The keyboard and thermostat of a delivered order exchanged; the agent names the items
    in the order given (the benchmark's expected call names them the other way round)."""
    trace = [
        {"kind": "user", "content": f"I want to exchange the keyboard and thermostat in {ORDER}."},
        *_lookups(ORDER),
        {"kind": "assistant", "content": "I will exchange both items. Shall I proceed?"},
        {"kind": "user", "content": "yes"},
        tool(
            "exchange_delivered_order_items",
            order_id=ORDER,
            item_ids=item_ids,
            new_item_ids=new_item_ids,
            payment_method_id=CARD,
        ),
        {"kind": "assistant", "content": "Your exchange has been requested."},
    ]
    expected = [
        action("find_user_id_by_name_zip", first_name="Yusuf", last_name="Rossi", zip="19122"),
        action("get_order_details", order_id=ORDER),
        action(
            "exchange_delivered_order_items",
            order_id=ORDER,
            item_ids=[KEYBOARD, THERMOSTAT],
            new_item_ids=[NEW_KEYBOARD, NEW_THERMOSTAT],
            payment_method_id=CARD,
        ),
    ]
    return {
        "id": case_id,
        "input": f"exchange items of {ORDER}",
        "trace": trace,
        "final_state": {"order_status": "exchange requested"},
        "ground_truth": {"actions": expected},
        "metadata": {"domain": "retail"},
    }


def modify_case(case_id: str, *, corrected: bool) -> dict[str, Any]:
    """The lamp and bottle of a pending order changed. ``corrected``: the agent first sent the
    wrong bottle variant, then called again with the right one."""

    def modify(bottle: str) -> dict[str, Any]:
        return tool(
            "modify_pending_order_items",
            order_id=PENDING,
            item_ids=[LAMP, BOTTLE],
            new_item_ids=[NEW_LAMP, bottle],
            payment_method_id=CARD,
        )

    writes = [modify(WRONG_BOTTLE), modify(NEW_BOTTLE)] if corrected else [modify(NEW_BOTTLE)]
    trace = [
        {"kind": "user", "content": f"Please change the lamp and the bottle in {PENDING}."},
        *_lookups(PENDING),
        *writes,
        {"kind": "assistant", "content": "Your order was modified."},
    ]
    expected = [
        action("get_order_details", order_id=PENDING),
        action(
            "modify_pending_order_items",
            order_id=PENDING,
            item_ids=[LAMP, BOTTLE],
            new_item_ids=[NEW_LAMP, NEW_BOTTLE],
            payment_method_id=CARD,
        ),
    ]
    return {
        "id": case_id,
        "input": f"modify items of {PENDING}",
        "trace": trace,
        "final_state": {"order_status": "pending (item modified)"},
        "ground_truth": {"actions": expected},
        "metadata": {"domain": "retail"},
    }
