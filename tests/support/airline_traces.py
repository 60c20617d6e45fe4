"""Recorded airline customer-service conversations (the shape of a tool-agent benchmark's runs:
a user, four assistant replies, lookups, a write, an errored call), for the whole-conversation
checks."""

from __future__ import annotations

import copy
from typing import Any

CANCEL_RUN: dict[str, Any] = {
    "id": "airline-cancel-014",
    "input": "Cancel my reservation NO6JO3 and refund it to the original card.",
    "trace": [
        {"kind": "system", "content": "You are an airline agent. Follow the policy."},
        {
            "kind": "user",
            "content": "Hi, I need to cancel reservation NO6JO3. My user id is mia_li_3668.",
        },
        {
            "kind": "assistant",
            "content": "I can help with that. Let me look up your profile and the reservation.",
            "attributes": {"model": "gpt-4o", "output_tokens": 18},
        },
        {
            "kind": "tool_call",
            "id": "call_1",
            "name": "get_user_details",
            "arguments": '{"user_id": "mia_li_3668"}',
            "result": {
                "user_id": "mia_li_3668",
                "email": "mia.li3818@example.com",
                "membership": "gold",
                "payment_methods": {"credit_card_4421": {"last_four": "7447"}},
            },
        },
        {
            "kind": "tool_call",
            "id": "call_2",
            "name": "get_reservation_details",
            "arguments": {"reservation_id": "NO6JO3"},
            "result": {
                "reservation_id": "NO6JO3",
                "origin": "JFK",
                "destination": "SFO",
                "cabin": "business",
                "total": 1234,
                "insurance": "no",
            },
        },
        {
            "kind": "assistant",
            "content": "Reservation NO6JO3 (JFK to SFO, business) qualifies for a full refund "
            "of $1,234 to your credit card ending in 7447. Shall I cancel it?",
        },
        {"kind": "user", "content": "Yes, please cancel it."},
        {
            "kind": "tool_call",
            "id": "call_3",
            "name": "cancel_reservation",
            "arguments": {"reservation_id": "NO6JO3"},
            "result": {"reservation_id": "NO6JO3", "status": "cancelled"},
        },
        {
            "kind": "tool_call",
            "id": "call_3",
            "name": "send_certificate",
            "arguments": {"user_id": "mia_li_3668", "amount": 100},
            "error": "Error: certificates are only for delayed flights",
        },
        {
            "kind": "assistant",
            "content": "Done: NO6JO3 is cancelled.  The refund will reach your card\n"
            "within 5-7   business days.",
        },
        {"kind": "user", "content": "Thanks, that's all."},
        {"kind": "assistant", "content": "You're welcome, Mia. Have a good day!"},
    ],
    "final_state": {
        "success": True,
        "reservations": {"NO6JO3": {"status": "cancelled", "total": 1234}},
        "items": [
            {"sku": "seat-2A", "price": 617.0},
            {"sku": "seat-2B", "price": 617.0},
        ],
    },
    "ground_truth": {
        "outputs": ["1234", "5-7 business days"],
        "refund": 1234,
        "email": "mia.li3818@example.com",
        "cabins": ["economy", "business", "basic_economy"],
        "none": [],
    },
}
"""Four replies: the refund amount is said in the second (as ``$1,234``), the refund time in
the third (with doubled spaces and a line break); the email is only in a tool result."""


def cancel_run(**changes: Any) -> dict[str, Any]:
    """A deep copy of :data:`CANCEL_RUN` with top-level ``changes``."""
    run = copy.deepcopy(CANCEL_RUN)
    run.update(changes)
    return run
