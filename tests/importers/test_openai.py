"""The ``openai`` format: Chat Completions message lists from an airline customer-service agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checkweigh.errors import CaseFileError
from support.importing import FIXTURES, load, shape, write_jsonl

AIRLINE = FIXTURES / "openai_airline.jsonl"


def test_a_conversation_whose_tool_call_ids_repeat_is_paired_turn_by_turn() -> None:
    cases, ctx = load("openai", AIRLINE)
    assert (ctx.records, ctx.cases, ctx.skipped) == (3, 3, [])
    cancel = cases[0]
    assert cancel.id == "airline-cancel-ZFA04Y"
    assert cancel.input == (
        "Hi, I need to cancel my trip. My user id is mia_li_3668 and the reservation is ZFA04Y."
    )
    assert shape(cancel) == [
        ("system", "You are an", None, None),
        ("user", "Hi, I need", None, None),
        # text that came with a tool call stays assistant content, before the call
        ("assistant", "Sure, let me", None, None),
        ("tool_call", "get_user_details", "call_0", None),
        ("tool_call", "get_reservation_details", "call_0", None),
        ("assistant", "Reservation ZFA04Y (JFK", None, None),
        ("user", "yes please", None, None),
        ("tool_call", "cancel_reservation", "call_0", None),
        ("assistant", "Done: reservation ZFA04Y", None, None),
    ]
    # each "call_0" result went to the call it answered, not to the first call_0
    calls = [s for s in cancel.trace if s.kind == "tool_call"]
    assert calls[0].result["membership"] == "gold"
    assert calls[1].result["origin"] == "JFK"
    assert calls[2].arguments == {"reservation_id": "ZFA04Y"}
    assert calls[2].result == {"reservation_id": "ZFA04Y", "status": "cancelled", "refund": 327}
    # content given as parts is joined; the record's model and usage describe the last reply
    assert cancel.output == (
        "Done: reservation ZFA04Y is cancelled.\n"
        "A refund of $327 will reach your card in 5-7 business days."
    )
    assert cancel.trace[-1].attributes == {
        "model": "gpt-4o-2024-08-06",
        "input_tokens": 5120,
        "output_tokens": 212,
        "total_tokens": 5332,
    }
    assert cancel.final_state["reservations"]["ZFA04Y"]["status"] == "cancelled"
    assert cancel.ground_truth["actions"][0]["name"] == "cancel_reservation"
    assert cancel.metadata == {"task_id": 14, "domain": "airline"}


def test_an_errored_call_keeps_its_error_and_the_retry_succeeds() -> None:
    change = load("openai", AIRLINE)[0][1]
    assert shape(change)[2:] == [
        ("tool_call", "get_reservation_details", "call_a1", None),
        ("tool_call", "search_direct_flight", "call_a2", None),
        ("assistant", "HAT170 on May", None, None),
        ("user", "yes, charge my", None, None),
        ("assistant", "Updating now.", None, None),
        (
            "tool_call",
            "update_reservation_flights",
            "call_b1",
            "Error: invalid date format 2024-5-22, expected YYYY-MM-DD",
        ),
        ("tool_call", "update_reservation_flights", "call_b2", None),
        ("assistant", "Your reservation NO6JO3", None, None),
    ]
    assert change.trace[3].result == [
        {"flight_number": "HAT170", "status": "available", "prices": {"economy": 120}}
    ]
    assert change.trace[8].result == {
        "reservation_id": "NO6JO3",
        "flights": [{"flight_number": "HAT170", "date": "2024-05-22"}],
        "charged": 120,
    }


def test_calls_without_ids_are_paired_by_position_and_a_stray_result_is_kept() -> None:
    bags = load("openai", AIRLINE)[0][2]
    assert shape(bags) == [
        ("system", "You are an", None, None),
        ("user", "How many bags", None, None),
        ("tool_call", "get_reservation_details", None, None),
        ("tool_call", "get_reservation_details", None, "reservation VAAOXJ not found"),
        ("assistant", "Reservation 4WQ150 includes", None, None),
        # a result that answers no call is an event, not lost
        ("event", "tool_result", "call_late", None),
        ("user", "ok thanks", None, None),
    ]
    assert bags.trace[2].result["free_bags"] == 2
    assert bags.trace[5].result == {"note": "stray result"}
    assert (
        bags.output == "Reservation 4WQ150 includes 2 free checked bags; I could not find VAAOXJ."
    )


def _call(call_id: str | None, name: str, arguments: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
    return call


def test_results_answered_out_of_order_go_to_their_calls(tmp_path: Path) -> None:
    log = write_jsonl(
        tmp_path / "weather.jsonl",
        [
            {"role": "developer", "content": "Answer with the tools."},
            {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo and Rome?"}]},
            {
                "role": "assistant",
                "tool_calls": [
                    _call("c1", "get_weather", '{"city": "Oslo"}'),
                    _call("c2", "get_weather", '{"city": "Rome"}'),
                ],
            },
            {"role": "tool", "tool_call_id": "c2", "content": "21C sunny"},
            {"role": "tool", "tool_call_id": "c1", "content": "-3C snow"},
            {"role": "assistant", "content": "Oslo -3C with snow, Rome 21C and sunny."},
        ],
    )
    (case,), _ = load("openai", log)
    assert case.id == "weather-1"  # no id in the record: the file's stem and the line
    assert case.input == "Weather in Oslo and Rome?"
    assert case.trace[0].attributes == {"role": "developer"}
    oslo, rome = case.trace[2], case.trace[3]
    assert (oslo.arguments, oslo.result) == ({"city": "Oslo"}, "-3C snow")
    assert (rome.arguments, rome.result) == ({"city": "Rome"}, "21C sunny")


def test_other_shapes_of_calls_and_results(tmp_path: Path) -> None:
    log = write_jsonl(
        tmp_path / "shapes.jsonl",
        {
            "id": 7,
            "messages": [
                {"role": "user", "content": "go", "timestamp": "2025-03-01T10:00:00Z"},
                # the flat {id, name, arguments} shape with an object (as tau2 logs it)
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "t1", "name": "search", "arguments": {"q": "x"}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 3},
                    "cost": 0.0004,
                },
                {"role": "tool", "id": "t1", "tool_call_id": "t1", "content": "[]", "error": True},
                # arguments that are not JSON are kept as text, marked unparsed
                {"role": "assistant", "tool_calls": [_call("t2", "run_sql", "SELECT * FROM")]},
                {"role": "tool", "tool_call_id": "t2", "content": '{"error": null, "rows": 3}'},
                # the older functions API
                {"role": "assistant", "function_call": {"name": "lookup", "arguments": ""}},
                {"role": "function", "name": "lookup", "content": "ERROR: timeout after 30s"},
                {"role": "assistant", "refusal": "I can't help with that."},
            ],
            "tools": [{"type": "function", "function": {"name": "search"}}],
        },
    )
    (case,), _ = load("openai", log)
    assert case.id == "7"
    assert case.trace[0].timestamp is not None
    assert case.trace[0].timestamp.isoformat() == "2025-03-01T10:00:00+00:00"
    search, sql, lookup = (s for s in case.trace if s.kind == "tool_call")
    assert (search.arguments, search.result, search.error) == ({"q": "x"}, [], "[]")
    assert search.attributes == {"input_tokens": 10, "output_tokens": 3, "cost_usd": 0.0004}
    assert (sql.arguments, sql.arguments_parsed, sql.error) == ("SELECT * FROM", False, None)
    assert sql.result == {"error": None, "rows": 3}
    assert (lookup.arguments, lookup.error) == ({}, "ERROR: timeout after 30s")
    assert case.output == "I can't help with that."
    # keys the format does not use are kept in the metadata
    assert case.metadata == {"tools": [{"type": "function", "function": {"name": "search"}}]}


BAD = [
    ({"messages": "hello"}, "messages: expected a list of messages, got the text 'hello'"),
    ({"conversation": []}, "expected a list of messages or an object with 'messages', got an"),
    ([{"role": "bot", "content": "hi"}], "messages[0].role: unknown role 'bot'; expected system"),
    ([{"content": "hi"}], "messages[0].role: unknown role missing"),
    (
        [{"role": "assistant", "tool_calls": [_call("x", "", "{}")]}],
        "messages[0].tool_calls[0].function.name: a tool call without a name",
    ),
    ([{"role": "user", "content": 5}], "messages[0].content: expected text or a list of content"),
    (["hi"], "messages[0]: expected a message (an object), got the text 'hi'"),
    ({"id": True, "messages": []}, "id: expected non-empty text or a whole number, got true"),
    ({"messages": [], "final_state": [1]}, "final_state: Input should be a valid dictionary"),
]


@pytest.mark.parametrize(("record", "message"), BAD, ids=[m[:40] for _, m in BAD])
def test_a_bad_record_names_its_line_and_field(tmp_path: Path, record: Any, message: str) -> None:
    good = [{"role": "user", "content": "fine"}]
    log = write_jsonl(tmp_path / "log.jsonl", good, record, good)
    with pytest.raises(CaseFileError) as caught:
        load("openai", log)
    assert str(caught.value).startswith(f"{log}:2: {message}")
    cases, ctx = load("openai", log, on_bad_record="skip")
    assert [c.id for c in cases] == ["log-1", "log-3"]
    assert (ctx.records, ctx.cases, ctx.skipped_total) == (3, 2, 1)
    assert ctx.skipped[0].one_line().startswith(f"{log}:2: {message}")


def test_a_json_list_file_names_records_by_position_and_refuses_duplicate_ids(
    tmp_path: Path,
) -> None:
    log = tmp_path / "export.json"
    convo = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    log.write_text(json.dumps([convo, {"id": "a", "messages": convo}, {"id": "a", "messages": []}]))
    cases, ctx = load("openai", log, on_bad_record="skip")
    assert [c.id for c in cases] == ["export-1", "a"]
    assert [b.one_line() for b in ctx.skipped] == [
        f"{log}: record 3: duplicate case id 'a' (first at {log} record 2)"
    ]
    assert ctx.notes() == [
        f"1 bad record(s) of 3 skipped (on_bad_record: skip): {log}: record 3: duplicate case "
        f"id 'a' (first at {log} record 2)"
    ]


def test_ids_must_be_unique_across_the_files_of_one_import(tmp_path: Path) -> None:
    one = write_jsonl(tmp_path / "a.jsonl", {"id": "x", "messages": []})
    two = write_jsonl(
        tmp_path / "b.jsonl", {"id": "y", "messages": []}, {"id": "x", "messages": []}
    )
    with pytest.raises(
        CaseFileError, match=rf"b.jsonl:2: duplicate case id 'x' \(first at {one}:1\)"
    ):
        load("openai", one, two)


def test_a_request_logged_with_its_response(tmp_path: Path) -> None:
    """A logging proxy's record: the request's messages, then the response's first choice."""
    log = write_jsonl(
        tmp_path / "proxy.jsonl",
        {
            "id": "req-81",
            "request": {
                "model": "gpt-4o-mini",
                "temperature": 0,
                "messages": [
                    {"role": "user", "content": "Is flight HAT045 on time?"},
                    {
                        "role": "assistant",
                        "tool_calls": [_call("c9", "flight_status", '{"flight": "HAT045"}')],
                    },
                    {"role": "tool", "tool_call_id": "c9", "content": '{"delay_min": 0}'},
                ],
            },
            "response": {
                "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
                "model": "gpt-4o-mini-2024-07-18",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "Yes, HAT045 is on time."},
                    }
                ],
                "usage": {"prompt_tokens": 96, "completion_tokens": 9},
            },
        },
    )
    (case,), _ = load("openai", log)
    assert shape(case) == [
        ("user", "Is flight HAT045", None, None),
        ("tool_call", "flight_status", "c9", None),
        ("assistant", "Yes, HAT045 is", None, None),
    ]
    assert case.trace[-1].attributes == {
        "model": "gpt-4o-mini-2024-07-18",
        "input_tokens": 96,
        "output_tokens": 9,
    }
    assert case.metadata == {"temperature": 0}
