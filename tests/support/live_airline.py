"""The recorded airline spans (tests/importers/fixtures/otel_airline.jsonl) as live traffic:
copies with their own trace ids, posted to the OTLP receiver at times a fake clock gives, for
a suite of two deterministic checks on them."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from checkweigh.server import create_app
from checkweigh.store import Store

FIXTURE = Path(__file__).parents[1] / "importers" / "fixtures" / "otel_airline.jsonl"
TOKEN = "a-token-of-sufficient-length"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
HOUR = 3600.0
T0 = 1_800_000_000.0
"""A window boundary (2027-01-15 08:00 UTC): a multiple of every window length used."""
LOOKUP_TRACE = "5b8aa5a2d2c872e8321cf37308d69df2"
"""The fixture's trace whose agent looks the reservation up (the other never does)."""
SUITE = """\
name: airline-live
cases: cases.jsonl
checks:
  answered:
    type: word_count
    path: output
    min: 5
  looked_up:
    type: tool_called
    step: {name: get_reservation_details}
rubrics:
  support:
    weights: {answered: 1.0, looked_up: 1.0}
"""


class Clock:
    """A clock a test moves by hand."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def fixture_lines() -> list[str]:
    """The fixture's export requests, one a line."""
    return FIXTURE.read_text().splitlines()


def traces(
    copies: int, *, first: int = 0, lookups: bool = True, only: str | None = None
) -> list[str]:
    """Export requests of ``copies`` copies of the fixture's traces (``only``: of that trace),
    ids made unique from copy ``first`` on; without ``lookups`` the reservation look-up tool
    is renamed (the ``looked_up`` check fails)."""
    out = []
    for copy in range(first, first + copies):
        for line in fixture_lines():
            text = line if lookups else line.replace("get_reservation_details", "get_details")
            request = json.loads(text)
            kept = 0
            for rs in request["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    if only is not None:
                        ss["spans"] = [s for s in ss["spans"] if s["traceId"] == only]
                    for span in ss["spans"]:
                        span["traceId"] = f"{copy:04x}" + span["traceId"][4:]
                    kept += len(ss["spans"])
            if kept:
                out.append(json.dumps(request))
    return out


def send(store: Store, lines: list[str], clock: Clock) -> None:
    """Post ``lines`` to the receiver of a server over ``store``, stamped by ``clock``."""
    client = TestClient(create_app(store, token=TOKEN, wall_clock=clock))
    for line in lines:
        answer = client.post("/v1/traces", content=line, headers=HEADERS)
        assert answer.status_code == 200, answer.text
