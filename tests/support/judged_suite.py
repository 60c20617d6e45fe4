"""A recorded suite with an LLM-judged tone check, run by the real CLI against a scripted
OpenAI-compatible judge on 127.0.0.1: the judge says no to a reply that shouts (``!!``) and yes
to the rest, so a run has known verdicts and the prompts the judge really saw."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from checkweigh.testing import Reply, fake_llm_server
from support.recorded_suite import make_case

JUDGE = "openai:gpt-test"
QUESTION = "Is the final reply professional and friendly in tone?"
SUITE = f"""\
name: tone
cases: cases.jsonl
checks:
  correct_time:
    type: equals
    path: final_state.booking.time
    expected_path: ground_truth.time
  polite:
    type: judge
    question: {QUESTION}
    rubric: Answer no if the reply shouts.
TRUST
rubrics:
  clarity:
    weights: {{correct_time: 0.5, polite: 0.5}}
thresholds: {{cases_pass_threshold: 0.0, metrics_pass_threshold: 0.0}}
"""


def tone_cases(count: int = 12, shouting: int = 4, extra: str = "") -> list[dict[str, Any]]:
    """``count`` bookings; the first ``shouting`` replies shout. ``extra`` goes into every
    reply (markup, say: the judge's prompt carries it)."""
    cases = []
    for i in range(count):
        loud = i < shouting
        reply = (
            f"BOOKED!! Alice and Bob at 10:00 {i}{extra}"
            if loud
            else (f"Booked Alice and Bob at 10:00, meeting {i}.{extra}")
        )
        cases.append(
            make_case(f"tone-{i:02d}", participants=["Alice", "Bob"], time="10:00", reply=reply)
        )
    return cases


def _answer(body: dict[str, Any]) -> Reply:
    prompt = "\n".join(
        str(m.get("content")) for m in body.get("messages", []) if m["role"] == "user"
    )
    if "!!" in prompt:
        return Reply(json.dumps({"verdict": "no", "reason": "the reply shouts at the user"}))
    return Reply(json.dumps({"verdict": "yes", "reason": "plain and polite"}))


def write_tone_suite(
    folder: Path, cases: list[dict[str, Any]], trust: dict[str, Any] | None = None
) -> Path:
    """The suite and its cases in ``folder``; with ``trust``, the judge check's bar."""
    folder.mkdir(parents=True, exist_ok=True)
    bar = "" if trust is None else f"    trust: {json.dumps(trust)}\n"
    (folder / "suite.yaml").write_text(SUITE.replace("TRUST\n", bar))
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return folder / "suite.yaml"


def judged_run_env(folder: Path, base_url: str) -> dict[str, str]:
    """The environment a ``checkweigh run --judge openai:gpt-test`` needs to reach the
    scripted judge at ``base_url`` (its cache kept under ``folder``)."""
    return {
        "OPENAI_API_KEY": "sk-test-labelling-0000",
        "OPENAI_BASE_URL": base_url,
        "CHECKWEIGH_CACHE_DIR": str(folder / "judge-cache"),
    }


def scripted_judge() -> Any:
    """The scripted judge server (a context manager giving its ``base_url``)."""
    return fake_llm_server([], respond=_answer)
