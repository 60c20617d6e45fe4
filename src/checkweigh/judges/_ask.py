"""Asking a judge for an answer of a given shape, with one repair request when it does not fit."""

from __future__ import annotations

from ._answers import Answer, AnswerError, parse_answer
from ._model import JudgeModel, JudgeRequest, Message


async def ask(judge: JudgeModel, request: JudgeRequest, shape: type[Answer]) -> Answer:
    """The judge's answer to ``request`` as a ``shape``; one repair request if it does not fit.

    Raises:
        JudgeError: a call failed for good.
        AnswerError: the answer did not fit, even after the repair.
    """
    reply = await judge.complete(request)
    try:
        return parse_answer(reply.text, shape)
    except AnswerError as first:
        repair = request.model_copy(
            update={
                "messages": (
                    *request.messages,
                    Message(role="assistant", content=reply.text),
                    Message(
                        role="user",
                        content=(
                            f"That answer is not valid ({first}). Reply again with only the "
                            "JSON object, in the shape asked for."
                        ),
                    ),
                )
            }
        )
        second = await judge.complete(repair)
        try:
            return parse_answer(second.text, shape)
        except AnswerError as exc:
            raise AnswerError(
                f"invalid judge answer after one repair: {exc}; answer was {second.text[:200]!r}"
            ) from None
