"""The ``mapping`` format: any JSON or JSONL log through a declarative field mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from checkweigh.errors import CaseFileError
from checkweigh.importers import FieldMapping
from support.importing import FIXTURES, load, shape, write_jsonl

TAU = FIXTURES / "tau_runs.json"
TAU_MAPPING = yaml.safe_load((FIXTURES / "mapping_tau.yaml").read_text())


def test_benchmark_results_with_ids_from_two_fields() -> None:
    cases, ctx = load("mapping", TAU, mapping=TAU_MAPPING)
    assert (ctx.records, ctx.cases) == (2, 2)
    booked, refused = cases
    assert (booked.id, refused.id) == ("42-0", "42-1")
    assert booked.input.startswith("Please book the same flight as last time, HAT045")
    assert booked.final_state == {"reward": 1.0}
    assert refused.final_state == {"reward": 0.0}
    assert booked.ground_truth["actions"] == [
        {"name": "book_reservation", "kwargs": {"flight_number": "HAT045"}}
    ]
    assert booked.metadata == {"task": 42, "trial": 0}
    # the messages went through the openai converter: repeated call ids paired turn by turn
    assert [s for s in shape(booked) if s[0] == "tool_call"] == [
        ("tool_call", "get_user_details", "call_1", None),
        ("tool_call", "book_reservation", "call_1", None),
    ]
    assert booked.trace[5].result == {"reservation_id": "HATHAT", "status": "confirmed"}
    assert refused.output == "Sorry, I cannot book flights."


def test_anthropic_messages_a_system_prompt_and_metadata_from_one_path(tmp_path: Path) -> None:
    log = write_jsonl(
        tmp_path / "calls.jsonl",
        {
            "call": {"uuid": "c-1", "tags": {"team": "billing"}},
            "prompt": "You are terse.",
            "exchange": [
                {"role": "user", "content": "refund order 5"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "u1", "name": "refund", "input": {"order": 5}}
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "u1", "content": "ok"}],
                },
                {"role": "assistant", "content": "Refunded."},
            ],
            "expected": {"refunded": [5]},
        },
    )
    mapping = {
        "id": "call.uuid",
        "messages": "exchange",
        "messages_format": "anthropic",
        "system": "prompt",
        "ground_truth": "expected",
        "metadata": "call.tags",
        "input": "exchange[0].content",
    }
    (case,), _ = load("mapping", log, mapping=mapping)
    assert case.id == "c-1"
    assert case.input == "refund order 5"
    assert shape(case) == [
        ("system", "You are terse.", None, None),
        ("user", "refund order 5", None, None),
        ("tool_call", "refund", "u1", None),
        ("assistant", "Refunded.", None, None),
    ]
    assert case.metadata == {"team": "billing"}
    assert case.ground_truth == {"refunded": [5]}


def test_steps_already_in_checkweigh_format(tmp_path: Path) -> None:
    log = tmp_path / "native.json"
    log.write_text(
        json.dumps(
            {
                "run": "r9",
                "steps": [
                    {"kind": "user", "content": "hi"},
                    {"kind": "tool_call", "name": "greet", "arguments": '{"who": "you"}'},
                ],
                "state": {"greeted": True},
            }
        )
    )
    mapping = {"id": "run", "trace": "steps", "final_state": "state"}
    (case,), _ = load("mapping", log, mapping=mapping)
    assert (case.id, case.input, case.final_state) == ("r9", "hi", {"greeted": True})
    assert case.trace[1].arguments == {"who": "you"}


def test_a_path_missing_from_a_record_is_a_bad_record_naming_the_field(tmp_path: Path) -> None:
    log = write_jsonl(
        tmp_path / "log.jsonl",
        {"sid": "a", "msgs": [{"role": "user", "content": "x"}], "gt": 1},
        {"sid": "b", "msgs": [{"role": "user", "content": "y"}]},
        {"sid": {"nested": 1}, "msgs": [], "gt": 2},
    )
    mapping = {"id": "sid", "messages": "msgs", "ground_truth": "gt"}
    with pytest.raises(CaseFileError) as caught:
        load("mapping", log, mapping=mapping)
    assert str(caught.value) == f"{log}:2: ground_truth: no value at 'gt' (mapping.ground_truth)"
    cases, ctx = load("mapping", log, on_bad_record="skip", mapping=mapping)
    assert [c.id for c in cases] == ["a"]
    assert [b.one_line() for b in ctx.skipped] == [
        f"{log}:2: ground_truth: no value at 'gt' (mapping.ground_truth)",
        f"{log}:3: id: expected non-empty text or a whole number, got an object",
    ]


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"messages": "turns", "messages_format": "gemini"}, "messages_format"),
        ({"messages": "turns..x"}, "malformed field path 'turns..x'"),
        ({"messages": "a", "trace": "b"}, "give either 'messages' or 'trace', not both"),
        ({"messages": "a", "system": "s"}, "'system' applies to messages_format: anthropic"),
        ({"mesages": "a"}, "Extra inputs are not permitted"),
        ({"id": []}, "should have at least 1 item"),
    ],
)
def test_a_bad_mapping_is_refused(mapping: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace(".", r"\.")):
        FieldMapping.model_validate(mapping)


def test_records_listed_inside_a_results_file(tmp_path: Path) -> None:
    """tau2-bench style: one JSON document whose ``simulations`` are the conversations, tool
    calls with object arguments, tool messages naming their call by ``id``."""
    results = tmp_path / "results.json"
    sims = [
        {
            "id": f"sim-{n}",
            "task_id": "7",
            "messages": [
                {"role": "user", "content": "cancel reservation EHGLP3"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "tc0", "name": "cancel_reservation", "arguments": {"id": "EHGLP3"}}
                    ],
                },
                {"role": "tool", "id": "tc0", "content": status, "error": status != "ok"},
                {"role": "assistant", "content": "Done."},
            ],
            "reward_info": {"reward": 1.0 if status == "ok" else 0.0},
        }
        for n, status in enumerate(["ok", "Error: reservation not found"])
    ]
    results.write_text(json.dumps({"tasks": [{"id": "7"}], "simulations": [*sims, "junk"]}))
    mapping = {
        "records": "simulations",
        "id": "id",
        "messages": "messages",
        "final_state": "reward_info",
    }
    cases, ctx = load("mapping", results, on_bad_record="skip", mapping=mapping)
    assert [c.id for c in cases] == ["sim-0", "sim-1"]
    assert [c.trace[1].error for c in cases] == [None, "Error: reservation not found"]
    assert cases[0].trace[1].arguments == {"id": "EHGLP3"}
    assert (ctx.records, ctx.cases) == (3, 2)
    assert [b.one_line() for b in ctx.skipped] == [
        f"{results}: record 1: simulations[2]: expected a record (an object), got the text 'junk'"
    ]
    mapping["records"] = "runs"
    _, ctx = load("mapping", results, on_bad_record="skip", mapping=mapping)
    assert [b.one_line() for b in ctx.skipped] == [
        f"{results}: record 1: records: expected a list of records at 'runs', got no value"
    ]


def test_tau_bench_results_read_as_openai_through_traj() -> None:
    cases, _ = load("openai", TAU)
    assert [c.id for c in cases] == ["tau_runs-1", "tau_runs-2"]
    assert cases[0].metadata["reward"] == 1.0
    assert cases[0].metadata["info"]["task"]["actions"][0]["name"] == "book_reservation"
    assert cases[0].trace[5].name == "book_reservation"
