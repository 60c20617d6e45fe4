"""Realistic airline customer-service conversations, for the benchmarks (no randomness: case
``i`` is always the same). Each is ~20 steps and ~15 KB of JSON, like the recorded runs of a
public tool-agent benchmark: a user lookup, reservation reads, a flight search with a long
result, one write that fails once and is retried, replies quoting facts."""

from __future__ import annotations

from typing import Any

CABINS = ("economy", "business", "basic_economy")
CITIES = ("JFK", "SFO", "ORD", "SEA", "ATL", "DFW", "LAX", "BOS", "MIA", "DEN")


def _flight(i: int, k: int) -> dict[str, Any]:
    return {
        "flight_number": f"HAT{(i * 7 + k * 13) % 300:03d}",
        "origin": CITIES[(i + k) % 10],
        "destination": CITIES[(i + k + 3) % 10],
        "scheduled_departure_time_est": f"{6 + k % 12:02d}:00:00",
        "scheduled_arrival_time_est": f"{9 + k % 12:02d}:30:00",
        "status": "available",
        "available_seats": {"basic_economy": 9 + k, "economy": 12 + k, "business": 3 + k % 4},
        "prices": {"basic_economy": 70 + k, "economy": 150 + 3 * k, "business": 420 + 5 * k},
    }


def conversation(i: int) -> dict[str, Any]:
    """Case ``i`` as checkweigh's step format (a dict ready for JSON)."""
    user = f"user_{i:06d}"
    res = f"R{i:05d}X"
    date = f"2024-05-{10 + i % 18:02d}"
    total = 1000 + (i * 37) % 9000
    cabin = CABINS[i % 3]
    profile = {
        "user_id": user,
        "name": {"first_name": "Mia", "last_name": f"Li{i}"},
        "address": {"address1": f"{i} Main St", "city": "Austin", "state": "TX", "zip": "78701"},
        "email": f"mia.li{i}@example.com",
        "payment_methods": {
            f"credit_card_{k}": {"source": "credit_card", "brand": "visa", "last_four": f"{k}421"}
            for k in range(8)
        },
        "membership": "gold",
        "reservations": [f"R{(i + k) % 99999:05d}X" for k in range(12)],
    }
    reservation = {
        "reservation_id": res,
        "user_id": user,
        "origin": "JFK",
        "destination": "SEA",
        "flight_type": "round_trip",
        "cabin": cabin,
        "flights": [_flight(i, k) | {"date": date, "price": 150 + k} for k in range(2)],
        "passengers": [{"first_name": "Mia", "last_name": f"Li{i}", "dob": "1990-04-05"}],
        "payment_history": [{"payment_id": "credit_card_1", "amount": total}],
        "created_at": "2024-05-01T10:00:00",
        "total_baggages": 1,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    flights = [_flight(i, k) for k in range(30)]
    new_flights = [{"flight_number": flights[k]["flight_number"], "date": date} for k in (2, 5)]
    write = {
        "reservation_id": res,
        "cabin": cabin,
        "flights": new_flights,
        "payment_id": "credit_card_1",
    }
    t = [
        {"kind": "system", "content": "You are an airline agent. Follow the policy. " * 20},
        {"kind": "user", "content": f"Hi, I want to change reservation {res} to later flights."},
        {"kind": "assistant", "content": "Sure, I can help. May I have your user id?"},
        {"kind": "user", "content": f"It is {user}."},
        {
            "kind": "tool_call",
            "name": "get_user_details",
            "id": f"call_{i}_1",
            "arguments": {"user_id": user},
            "result": profile,
            "latency_ms": 40,
        },
        {
            "kind": "tool_call",
            "name": "get_reservation_details",
            "id": f"call_{i}_2",
            "arguments": {"reservation_id": res},
            "result": reservation,
            "latency_ms": 35,
        },
        {"kind": "assistant", "content": f"I found reservation {res} from JFK to SEA on {date}."},
        {"kind": "user", "content": "Yes, please look for flights later that day."},
        {
            "kind": "assistant",
            "content": f"Let me search the direct flights from JFK to SEA on {date}.",
        },
        {
            "kind": "tool_call",
            "name": "search_direct_flight",
            "id": f"call_{i}_3",
            "arguments": {"origin": "JFK", "destination": "SEA", "date": date},
            "result": flights,
            "latency_ms": 120,
        },
        {
            "kind": "assistant",
            "content": "Here are the options: "
            + ", ".join(
                f"{f['flight_number']} at {f['scheduled_departure_time_est']}" for f in flights[:6]
            ),
        },
        {
            "kind": "user",
            "content": f"Take {new_flights[0]['flight_number']} and "
            f"{new_flights[1]['flight_number']}.",
        },
        {
            "kind": "assistant",
            "content": f"To confirm: change {res} to those flights, paid with credit_card_1. "
            "Please confirm (yes/no).",
        },
        {"kind": "user", "content": "Yes, confirm."},
        {
            "kind": "tool_call",
            "name": "update_reservation_flights",
            "id": f"call_{i}_4",
            "arguments": write | {"payment_id": "credit_card_9"},
            "error": "Error: payment method not found",
            "latency_ms": 30,
        },
        {
            "kind": "tool_call",
            "name": "update_reservation_flights",
            "id": f"call_{i}_4",
            "arguments": write,
            "result": reservation | {"flights": new_flights},
            "latency_ms": 45,
        },
        {
            "kind": "assistant",
            "content": f"Done. Your reservation {res} is updated; the fare difference of "
            f"${total:,} was charged.",
        },
        {"kind": "user", "content": "Thanks, that's all."},
        {"kind": "assistant", "content": "You're welcome. Have a good flight!"},
        {"kind": "event", "name": "conversation_end"},
    ]
    # about a third of the cases go wrong in one of the ways real runs do
    if i % 7 == 3:  # the write goes to the wrong date
        wrong = [dict(f, date="2024-06-01") for f in new_flights]
        t[15] = t[15] | {"arguments": write | {"flights": wrong}}
    if i % 11 == 5:  # the retry never happens: the only write failed
        del t[15]
    if i % 13 == 2:  # the agent reads out a card number
        t[-3] = t[-3] | {"content": t[-3]["content"] + " Charged to the visa ending 1421."}
    if i % 17 == 8:  # a transfer, then a write anyway
        t.insert(
            -2,
            {
                "kind": "tool_call",
                "name": "transfer_to_human_agents",
                "arguments": {"summary": "user wants a refund"},
                "result": "Transfer successful",
            },
        )
    return {
        "id": f"airline-{i:06d}",
        "input": t[1]["content"],
        "trace": t,
        "final_state": {"reservation": {"reservation_id": res, "flights": new_flights}},
        "ground_truth": {
            "actions": [
                {"name": "get_user_details", "kwargs": {"user_id": user}},
                {"name": "update_reservation_flights", "kwargs": write},
            ],
            "outputs": [res, str(total)],
            "user": {"user_id": user},
            "reservation_id": res,
        },
        "metadata": {"domain": "airline", "task": i % 50},
    }


SUITE = """\
name: airline-conversations
cases: {cases}
checks:
  writes_as_expected:
    type: trajectory_match
    reference_path: ground_truth.actions
    mode: unordered
    arguments_mode: exact
    select: {{name: [book_reservation, cancel_reservation, "update_reservation_*"], error: false}}
  all_expected_calls:
    type: trajectory_match
    reference_path: ground_truth.actions
    mode: superset
    arguments_mode: subset
    select: {{error: false}}
  user_looked_up:
    type: tool_called
    step: {{name: get_user_details, arguments_path: ground_truth.user, error: false}}
  read_before_write:
    type: before
    first: get_reservation_details
    then: "update_reservation_*"
  lookup_early:
    type: within_first
    step: {{name: "get_*"}}
    n: 6
  at_most_two_writes:
    type: count
    step: {{name: "update_*", error: false}}
    max: 2
  no_write_after_transfer:
    type: never_after
    step: {{name: "update_*"}}
    after: transfer_to_human_agents
  facts_in_replies:
    type: contains
    path: trace[kind=assistant].content
    values_path: ground_truth.outputs
    mode: all
    within: any
    normalize: [thousands_separators, whitespace]
  no_card_leak:
    type: contains
    path: trace[kind=assistant].content
    values: ["0421", "1421"]
    mode: none
    within: any
  confirmation_asked:
    type: regex
    path: trace[kind=assistant].content
    pattern: "(?i)please confirm"
rubrics:
  task:
    weights:
      writes_as_expected: 3
      all_expected_calls: 2
      user_looked_up: 1
      read_before_write: 1
      lookup_early: 1
      at_most_two_writes: 1
      no_write_after_transfer: 1
      facts_in_replies: 2
      no_card_leak: 1
      confirmation_asked: 1
"""
