"""A check type: the agent's final reply mentions every word of a list.

In a suite::

    checks:
      names_the_people:
        type: mentions
        words: [Alice, Bob]
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from checkweigh import Case, Verdict, failed, passed


class Mentions(BaseModel):
    """The final reply names every one of ``words`` (whole words, any case)."""

    type: Literal["mentions"] = "mentions"
    words: list[str] = Field(min_length=1)
    """The words the reply must mention."""
    version: str = "1"
    """Bump when what the check answers changes, so runs stay comparable."""

    def evaluate(self, case: Case) -> Verdict:
        """Pass when the last assistant message holds each word; fail naming the missing."""
        reply = case.output
        missing = [
            w for w in self.words if not re.search(rf"\b{re.escape(w)}\b", reply, re.IGNORECASE)
        ]
        if missing:
            return failed(f"the reply does not mention {', '.join(missing)}")
        return passed(f"the reply mentions {', '.join(self.words)}")
