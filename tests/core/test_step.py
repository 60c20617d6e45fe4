"""The step format: ids, nesting, provider attributes, and arguments given as JSON text."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from checkweigh.core import Case, Step


def test_openai_arguments_text_is_parsed_into_an_object() -> None:
    raw = {
        "kind": "tool_call",
        "name": "update_reservation_flights",
        "id": "call_9f2",
        "arguments": json.dumps({"reservation_id": "ZFA04Y", "flights": [{"date": "2024-05-17"}]}),
    }
    step = Step.model_validate_json(json.dumps(raw))
    assert step.arguments == {"reservation_id": "ZFA04Y", "flights": [{"date": "2024-05-17"}]}
    assert step.arguments_parsed
    assert step.id == "call_9f2"


@pytest.mark.parametrize("text", ['{"reservation_id": "ZFA0', "[1, 2]", "reservation ZFA04Y", ""])
def test_arguments_text_that_is_not_a_json_object_is_kept_and_marked(text: str) -> None:
    step = Step(kind="tool_call", name="cancel_reservation", arguments=text)
    assert step.arguments == text
    assert not step.arguments_parsed


def test_ids_parents_and_attributes_round_trip() -> None:
    case = Case(
        id="airline-17",
        trace=[
            Step(
                kind="assistant",
                content="Let me check.",
                id="msg_1",
                attributes={"model": "gpt-4o", "input_tokens": 812, "output_tokens": 40},
            ),
            Step(
                kind="tool_call",
                name="get_user_details",
                id="call_1",
                parent_id="msg_1",
                arguments={"user_id": "mia_li_3668"},
                result={"name": "Mia"},
            ),
        ],
    )
    again = Case.model_validate_json(case.model_dump_json())
    assert again == case
    assert again.trace[0].attributes["input_tokens"] == 812
    assert again.trace[1].parent_id == "msg_1"


def test_old_steps_load_unchanged_and_unknown_keys_stay_errors() -> None:
    old = Step.model_validate({"kind": "tool_call", "name": "book", "arguments": {"d": 30}})
    assert old.arguments == {"d": 30}
    assert old.attributes == {}
    assert old.id is None
    with pytest.raises(ValidationError, match=r"Extra inputs are not permitted"):
        Step.model_validate({"kind": "tool_call", "name": "book", "tool_call_id": "x"})
