"""Asking a judge for an answer of a given shape, with one repair request when it does not fit.

Only a valid answer is remembered by a caching judge: an answer that fails validation (and
would give an errored verdict) is never cached, so the next run asks again. When the repair
succeeds, its answer is cached under the original question.
"""

from __future__ import annotations

from collections.abc import Callable

from .._text import safe_data, safe_text
from ._answers import Answer, AnswerError, parse_answer
from ._context import check_context
from ._exchanges import note_exchange
from ._model import JudgeError, JudgeModel, JudgeReply, JudgeRequest, Message


def _accept(text: str, shape: type[Answer], validate: Callable[[Answer], object] | None) -> Answer:
    answer = parse_answer(text, shape)
    if validate is not None:
        validate(answer)
    return answer


async def _complete(judge: JudgeModel, request: JudgeRequest) -> JudgeReply:
    """One call, noted for the check that made it (failed calls too); none for a prompt over
    the judge's input limit (:class:`~checkweigh.judges.ContextLimitError`)."""
    check_context(judge, request)
    try:
        reply = await judge.complete(request)
    except JudgeError as exc:
        note_exchange(request, None, safe_text(str(exc)))
        raise
    reply = safe_data(reply)  # where a judge's text enters: see checkweigh._text
    note_exchange(request, reply)
    return reply


def _remember(judge: JudgeModel, request: JudgeRequest, reply: JudgeReply) -> None:
    remember = getattr(judge, "remember", None)
    if remember is not None:
        remember(request, reply)


async def ask(
    judge: JudgeModel,
    request: JudgeRequest,
    shape: type[Answer],
    validate: Callable[[Answer], object] | None = None,
) -> Answer:
    """The judge's answer to ``request`` as a ``shape``; one repair request if it does not fit.

    ``validate`` checks what the shape cannot (e.g. every question answered once) and raises
    :class:`AnswerError` when the answer will not do.

    Raises:
        ContextLimitError: the prompt is over the judge's input limit (nothing was sent).
        JudgeError: a call failed for good.
        AnswerError: the answer did not fit, even after the repair.
    """
    reply = await _complete(judge, request)
    try:
        answer = _accept(reply.text, shape, validate)
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
        second = await _complete(judge, repair)
        try:
            answer = _accept(second.text, shape, validate)
        except AnswerError as exc:
            raise AnswerError(
                f"invalid judge answer after one repair: {exc}; answer was {second.text[:200]!r}"
            ) from None
        _remember(judge, request, second)
        return answer
    _remember(judge, request, reply)
    return answer
