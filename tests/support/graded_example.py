"""The judge behind ``examples/scheduling/judge-cache``: a stand-in that answers by rule from
the agent's final reply, served on 127.0.0.1 with the OpenAI wire format, so the recorded
answers are real cache entries of ``--judge openai:stand-in``.

It is no model: its answers only illustrate what ``checkweigh align`` reports when a yes/no
judge check and a graded metric are labelled by the same person. Like a graded judge, it is
unsteady in the middle of the scale (3 or 4 by a hash of the reply), where the source says a
1-5 judge's noise lives.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from checkweigh.testing import Reply

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "scheduling"
SUITE = EXAMPLE / "judged.yaml"
CACHE = EXAMPLE / "judge-cache"
LABELS = EXAMPLE / "judged-labels.csv"
JUDGE = "openai:stand-in"

_ANSWER = re.compile(r"<agent_final_answer>\n(.*?)\n</agent_final_answer>", re.S)


def _reply_of(body: dict[str, Any]) -> str:
    prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
    found = _ANSWER.search(prompt)
    if found is None:
        raise AssertionError("the judge prompt has no final answer block")
    text = found.group(1)
    return "" if text == "(no answer)" else text


def _middle(reply: str) -> int:
    """3 or 4, steadily for the same reply: the unsteady middle of the scale."""
    return 3 + hashlib.sha256(reply.encode()).digest()[0] % 2


def delivery(reply: str) -> int:
    """The stand-in's 0-5 grade of how the reply is delivered."""
    if not reply:
        return 0
    if reply.startswith("ERROR"):
        return 1
    if len(reply.split()) < 5:
        return 2
    if "so I booked the next free slot instead" in reply:
        return 5
    return _middle(reply)


def compliance(reply: str) -> int:
    """The stand-in's 0-5 grade of instruction compliance."""
    return 0 if not reply else 2 if reply.startswith("ERROR") else 4


def tone(reply: str) -> bool:
    """The stand-in's yes/no on tone: no for a shouted error or no reply at all."""
    return bool(reply) and not reply.startswith("ERROR")


def respond(body: dict[str, Any]) -> Reply:
    """The stand-in's answer to one judge request (a yes/no question or a graded one)."""
    reply = _reply_of(body)
    prompt = body["messages"][-1]["content"]
    if '{"scores":' in prompt:
        scores = [
            {"metric": "instruction_compliance", "score": compliance(reply), "reason": "rule"},
            {"metric": "response_delivery", "score": delivery(reply), "reason": "rule"},
        ]
        return Reply(json.dumps({"scores": scores}))
    yes = tone(reply)
    why = "polite and plain" if yes else "no reply, or an error code shouted at the user"
    return Reply(json.dumps({"verdict": "yes" if yes else "no", "reason": why}))
