"""tau-bench's airline rule, in YAML with built-in checks only, scored through ``checkweigh run``.

The rule: every expected write call was made, successfully, with the expected arguments, and no
other write succeeded. The expected calls live in each case (``ground_truth.actions``, tau-bench's
``{name, kwargs}`` shape, reads and writes mixed); the suite names the write tools by a pattern
and counts only calls that did not error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from checkweigh.cli import app

SUITE = """\
name: airline-writes
description: tau-bench airline runs, judged by the benchmark's write rule
cases: cases.jsonl
x-writes: &writes
  name: [book_reservation, cancel_reservation, send_certificate, "update_reservation_*"]
  error: false
checks:
  expected_writes:
    type: trajectory_match
    reference_path: ground_truth.actions
    mode: unordered
    arguments_mode: exact
    select: *writes
    description: >-
      every expected write call was made, successfully, with the expected arguments; no other
      write succeeded
  looked_up_first:
    type: before
    first: {name: get_reservation_details, error: false}
    then: *writes
    description: a reservation was read before any write changed it
rubrics:
  reward:
    weights:
      expected_writes: {weight: 0.8, required: true}
      looked_up_first: {weight: 0.2, not_applicable: pass}
thresholds:
  pass_threshold: 100
  metrics_pass_threshold: 50
  cases_pass_threshold: 50
"""

USER_ID = "mia_li_3668"
RES = "ZFA04Y"
NEW_FLIGHTS = [
    {"flight_number": "HAT170", "date": "2024-05-18"},
    {"flight_number": "HAT022", "date": "2024-05-21"},
]


def _tool(
    name: str, arguments: Any, result: Any = None, error: str | None = None
) -> dict[str, Any]:
    step: dict[str, Any] = {"kind": "tool_call", "name": name, "arguments": arguments}
    step["result"] = error if error is not None else json.dumps(result or {"ok": True})
    if error is not None:
        step["error"] = error
    return step


def _user(text: str) -> dict[str, Any]:
    return {"kind": "user", "content": text}


def _say(text: str) -> dict[str, Any]:
    return {"kind": "assistant", "content": text}


def _lookups() -> list[dict[str, Any]]:
    return [
        _user(f"Hi, I'm Mia Li ({USER_ID}). I need to move reservation {RES} to later flights."),
        _tool("get_user_details", {"user_id": USER_ID}, {"user_id": USER_ID, "membership": "gold"}),
        _tool(
            "get_reservation_details",
            {"reservation_id": RES},
            {"reservation_id": RES, "cabin": "economy", "origin": "JFK", "destination": "SEA"},
        ),
        _tool(
            "search_direct_flight",
            {"origin": "JFK", "destination": "SEA", "date": "2024-05-18"},
            [{"flight_number": "HAT170", "price": 142}],
        ),
    ]


def _update(date: str = "2024-05-18", **extra: Any) -> dict[str, Any]:
    flights = [dict(NEW_FLIGHTS[0], date=date), NEW_FLIGHTS[1]]
    return {
        "reservation_id": RES,
        "cabin": "economy",
        "flights": flights,
        "payment_id": "credit_card_4421486",
        **extra,
    }


EXPECTED_CHANGE = [
    {"name": "get_user_details", "kwargs": {"user_id": USER_ID}},
    {"name": "get_reservation_details", "kwargs": {"reservation_id": RES}},
    {"name": "update_reservation_flights", "kwargs": _update()},
]


def _case(case_id: str, trace: list[dict[str, Any]], actions: list[Any]) -> dict[str, Any]:
    return {
        "id": case_id,
        "input": trace[0]["content"],
        "trace": trace,
        "ground_truth": {"actions": actions},
        "metadata": {"domain": "airline"},
    }


def airline_cases() -> list[dict[str, Any]]:
    done = _say("Your reservation ZFA04Y now flies HAT170 on May 18 and HAT022 on May 21.")
    certificate = {"user_id": USER_ID, "amount": 150.0}
    return [
        _case(
            "change-ok",
            [*_lookups(), _tool("update_reservation_flights", _update()), done],
            EXPECTED_CHANGE,
        ),
        _case(
            "change-wrong-date",
            [*_lookups(), _tool("update_reservation_flights", _update("2024-05-17")), done],
            EXPECTED_CHANGE,
        ),
        _case(
            "retry-after-error",
            [
                *_lookups(),
                _tool(
                    "update_reservation_flights",
                    _update(payment_id="gift_card_0001"),
                    error="Error: payment method not found",
                ),
                _say("That gift card is not on file; I'll use your credit card instead."),
                _tool("update_reservation_flights", _update()),
                done,
            ],
            EXPECTED_CHANGE,
        ),
        _case(
            "cancel-only-errored",
            [
                *_lookups()[:3],
                _tool(
                    "cancel_reservation",
                    {"reservation_id": RES},
                    error="Error: reservation cannot be cancelled",
                ),
                _say("Your reservation has been cancelled."),
            ],
            [
                *EXPECTED_CHANGE[:2],
                {"name": "cancel_reservation", "kwargs": {"reservation_id": RES}},
            ],
        ),
        _case(
            "unexpected-cancel",
            [
                *_lookups(),
                _tool("update_reservation_flights", _update()),
                _tool("cancel_reservation", {"reservation_id": "4WQ150"}),
                done,
            ],
            EXPECTED_CHANGE,
        ),
        _case(
            "certificate-as-integer",
            [
                *_lookups()[:3],
                _tool("send_certificate", {"user_id": USER_ID, "amount": 150}),
                _say("I've sent you a $150 certificate for the delay."),
            ],
            [*EXPECTED_CHANGE[:2], {"name": "send_certificate", "kwargs": certificate}],
        ),
        _case(
            "no-write-expected",
            [
                *_lookups()[:3],
                _tool(
                    "cancel_reservation",
                    {"reservation_id": RES},
                    error="Error: basic economy cannot be cancelled",
                ),
                _tool("transfer_to_human_agents", {"summary": "wants a refund on basic economy"}),
                _say("I've transferred you to a colleague who can help with a refund."),
            ],
            [
                *EXPECTED_CHANGE[:2],
                {
                    "name": "transfer_to_human_agents",
                    "kwargs": {"summary": "wants a refund on basic economy"},
                },
            ],
        ),
        _case(
            "json-text-arguments",
            [
                *_lookups()[:3],
                # OpenAI logs arguments as JSON text, keys in any order
                _tool("send_certificate", json.dumps({"amount": 150, "user_id": USER_ID})),
                _tool("update_reservation_flights", json.dumps(_update())),
                done,
            ],
            [*EXPECTED_CHANGE, {"name": "send_certificate", "kwargs": certificate}],
        ),
        _case(
            "truncated-arguments",
            [
                *_lookups(),
                _tool("update_reservation_flights", json.dumps(_update())[:60]),
                done,
            ],
            EXPECTED_CHANGE,
        ),
    ]


def test_tau_bench_write_rule_in_yaml(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE)
    cases = airline_cases()
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    out = tmp_path / "results.json"
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(tmp_path / "suite.yaml"),
            "--db",
            f"sqlite:///{tmp_path / 'r.db'}",
            "--json",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    data = json.loads(out.read_text())
    verdicts = {r["case_id"]: r["verdicts"]["expected_writes"] for r in data["results"]}
    states = {case_id: v["state"] for case_id, v in verdicts.items()}
    assert states == {
        "change-ok": "passed",
        "change-wrong-date": "failed",
        "retry-after-error": "passed",
        "cancel-only-errored": "failed",
        "unexpected-cancel": "failed",
        "certificate-as-integer": "passed",
        "no-write-expected": "passed",
        "json-text-arguments": "passed",
        "truncated-arguments": "failed",
    }
    reasons = {case_id: v["reason"] for case_id, v in verdicts.items()}
    assert reasons["change-ok"] == "trajectory ['update_reservation_flights'] matches (unordered)"
    assert reasons["change-wrong-date"] == (
        "missing call update_reservation_flights(reservation_id='ZFA04Y', cabin='economy', ...): "
        "closest call (step 5) differs at flights[0].date: '2024-05-17' vs expected '2024-05-18' "
        "(unordered: 1 missing, 1 extra)"
    )
    assert reasons["cancel-only-errored"] == (
        "missing call cancel_reservation(reservation_id='ZFA04Y'): cancel_reservation at step 4 "
        "errored ('Error: reservation cannot be cancelled'), not counted (unordered: 1 missing, "
        "0 extra)"
    )
    assert reasons["unexpected-cancel"] == (
        "extra call cancel_reservation(reservation_id='4WQ150') at step 6 "
        "(unordered: 0 missing, 1 extra)"
    )
    assert reasons["truncated-arguments"].startswith(
        "missing call update_reservation_flights(reservation_id='ZFA04Y', cabin='economy', ...): "
        'closest call (step 5) has unparsed arguments \'{"reservation_id": "ZFA04Y"'
    )
    assert reasons["truncated-arguments"].endswith(
        "(not a JSON object) (unordered: 1 missing, 1 extra)"
    )
    # the ordering check sees only successful writes, and passes wherever a read came first
    ordered = {r["case_id"]: r["verdicts"]["looked_up_first"]["state"] for r in data["results"]}
    assert ordered["no-write-expected"] == "not_applicable"  # no write succeeded
    assert ordered["change-ok"] == "passed"
    passed = sorted(r["case_id"] for r in data["results"] if r["case"]["state"] == "passed")
    assert passed == [
        "certificate-as-integer",
        "change-ok",
        "json-text-arguments",
        "no-write-expected",
        "retry-after-error",
    ]
