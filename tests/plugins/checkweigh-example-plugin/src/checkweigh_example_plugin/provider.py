"""A judge provider that answers from a canned rule, with no network and no key.

``--judge canned:MODEL`` answers every yes/no question of a judge check:

- ``canned:yes`` (or ``canned:any``): always yes;
- ``canned:no``: always no;
- ``canned:WORD``: yes when WORD occurs in the prompt (the question and the trace), else no.
"""

from __future__ import annotations

import json

from checkweigh.judges import JudgeOptions, JudgeReply, JudgeRequest


class CannedJudge:
    """A judge (``name`` and async ``complete``) built by ``CannedJudge(model, options,
    offline)``, the call every judge provider answers."""

    def __init__(self, model: str, options: JudgeOptions, offline: bool) -> None:
        self.model = model
        self.options = options

    @property
    def name(self) -> str:
        """``canned:<model>``: what the judge cache and the report name it by."""
        return f"canned:{self.model}"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """The verdict the rule gives, as the JSON a judge check reads."""
        rule = self.model.lower()
        if rule in ("yes", "any"):
            yes, why = True, "canned: always yes"
        elif rule == "no":
            yes, why = False, "canned: always no"
        else:
            prompt = "\n".join(m.content for m in request.messages).lower()
            yes = rule in prompt
            why = f"canned: {self.model!r} {'occurs' if yes else 'does not occur'} in the prompt"
        text = json.dumps({"verdict": "yes" if yes else "no", "reason": why})
        return JudgeReply(text=text, model=self.model)
