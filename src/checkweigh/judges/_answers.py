"""Strict parsing of a judge's answer: a JSON object of the expected shape, or a clear error.

A verdict is constrained at the type layer (``Literal["yes", "no"]``): "1", "true", "Yes!" or
a missing reason are rejected, never coerced.
"""

from __future__ import annotations

import functools
import json
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._text import safe_data
from ..errors import CheckweighError

Answer = TypeVar("Answer", bound=BaseModel)


class BinaryAnswer(BaseModel):
    """The only answer a yes/no judge may give."""

    model_config = ConfigDict(extra="forbid", strict=True)

    verdict: Literal["yes", "no"]
    """yes or no, in lower case."""
    reason: str = Field(min_length=1)
    """Why, in a sentence."""


class NumberedAnswer(BaseModel):
    """A yes/no answer to one numbered question (or statement)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    index: int = Field(ge=1)
    """The question's number."""
    verdict: Literal["yes", "no"]
    """yes or no."""
    reason: str = Field(min_length=1)
    """Why."""


class Checklist(BaseModel):
    """Yes/no answers to numbered questions, in any order."""

    model_config = ConfigDict(extra="forbid", strict=True)

    answers: list[NumberedAnswer]
    """Each question exactly once."""

    def in_order(self, n: int, what: str = "question") -> list[NumberedAnswer]:
        """The answers to questions 1..n, in order.

        Raises:
            AnswerError: a question is missing or answered twice.
        """
        indices = sorted(a.index for a in self.answers)
        if indices != list(range(1, n + 1)):
            raise AnswerError(f"expected one answer for each of {what}s 1..{n}, got {indices}")
        return sorted(self.answers, key=lambda a: a.index)


class AnswerError(CheckweighError, ValueError):
    """A judge answer that does not fit the expected shape; the text says how."""


def _json_object(text: str) -> object:
    try:
        # json.loads reads "\ud800" as a lone surrogate: made storable where the answer enters
        return safe_data(_decoded(text))
    except RecursionError:  # a JSON bomb: nesting deeper than the parser goes
        raise AnswerError("the answer's JSON is nested too deeply") from None


def _decoded(text: str) -> object:
    stripped = text.strip()
    if stripped.startswith("```"):
        # a fenced block: drop the fence lines, keep what is inside
        lines = stripped.splitlines()[1:]
        if lines and lines[-1].strip().startswith("```"):
            lines = lines[:-1]
        stripped = "\n".join(lines).strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:  # prose around the object, perhaps: cut the object out
        start, end = stripped.find("{"), stripped.rfind("}")
    if start == -1 or end <= start:
        raise AnswerError("the answer holds no JSON object")
    try:
        return json.loads(stripped[start : end + 1])
    except json.JSONDecodeError as exc:
        raise AnswerError(f"the answer's JSON is malformed: {exc.msg}") from None


def parse_answer(text: str, shape: type[Answer]) -> Answer:
    """The answer in ``text`` as a ``shape``.

    Raises:
        AnswerError: no JSON object, malformed JSON, or a value of the wrong shape.
    """
    data = _json_object(text)
    try:
        return shape.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"]) or "the answer"
        raise AnswerError(f"{where}: {err['msg']}") from None


@functools.cache
def schema_of(shape: type[BaseModel]) -> dict[str, object]:
    """The JSON schema of ``shape``, for providers with structured output.

    Built once per shape (pydantic takes about half a millisecond to generate one) and shared by
    every request that asks for it: callers read it, never change it."""
    return shape.model_json_schema()
