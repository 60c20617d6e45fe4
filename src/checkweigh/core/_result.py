"""The result of one execution of one case: every verdict and every rubric's score."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, cast

from pydantic import ValidationError

from .._text import NOT_JSON, json_with_surrogates
from ._case import Case
from ._exchange import JudgeExchange
from ._result_records import ResultRecord
from ._scoring import EvaluationResult, ScoreStatus
from ._usage import CaseUsage
from ._verdict import Verdict


class _Fields(NamedTuple):
    """The fields of :class:`CaseResult` (documented there)."""

    case_id: str
    repeat: int
    verdicts: Mapping[str, Verdict]
    results: Mapping[str, EvaluationResult]
    latency_ms: float | None = None
    agent_error: str | None = None
    """Set when the agent target raised: then there are no verdicts and the case is errored."""
    position: int = 0
    """The case's position in its cases file, so results can be listed in input order."""
    usage: CaseUsage | None = None
    """Tokens and cost the agent's log recorded for the case (None when it recorded none)."""
    case: Case | None = None
    body: bytes | None = None
    exchanges: tuple[JudgeExchange, ...] = ()


class CaseResult(_Fields):
    """One case run once (``repeat`` counts from 0), scored on every rubric of the suite.

    Attributes:
        case_id: The case's id.
        repeat: Which execution of the case (from 0).
        verdicts: Every check's verdict, by check name.
        results: Every rubric's result, by rubric name.
        latency_ms: How long the agent took (None when unknown).
        agent_error: Set when the agent target raised: then there are no verdicts and the
            case is errored.
        position: The case's position in its cases file, so results can be listed in input
            order.
        usage: Tokens and cost the agent's log recorded for the case (None when it recorded
            none).
        body: The case as the JSON line it was read from, when it was evaluated unchanged
            (a recorded case of a JSONL file): the store keeps these bytes instead of
            serializing the case again, and :attr:`case` is parsed from them.
        exchanges: Every judge call made for this execution, in the order made.
    """

    @property
    def case(self) -> Case | None:
        """The case as evaluated (after the agent ran, with the trace it produced).

        Given for every result of a run, whatever the case's source: a case read from a
        JSONL file and evaluated as read is kept as its line (:attr:`body`), to spare the
        garbage collector thousands of parsed cases, and parsed from it on first read (then
        kept). None only for a result rebuilt from a stored record without its case.
        """
        held = cast("Case | None", tuple.__getitem__(self, 8))  # the field, under this name
        if held is not None or self.body is None:
            return held
        cache = self.__dict__
        parsed: Case | None = cache.get("_case")
        if parsed is None:
            parsed = cache["_case"] = case_of_json(self.body)
        return parsed

    @property
    def errored(self) -> bool:
        """True when the agent failed or any rubric could not be scored because a check errored."""
        if self.agent_error is not None:
            return True
        return any(r.status is ScoreStatus.ERRORED for r in self.results.values())

    def to_record(self) -> dict[str, Any]:
        """The stored record (:class:`~checkweigh.core.ResultRecord`) as JSON-ready builtins."""
        return ResultRecord.of(self).to_dict()

    @classmethod
    def from_record(
        cls, record: Mapping[str, Any], rubric_checks: Mapping[str, Sequence[str]] | None = None
    ) -> CaseResult:
        """Rebuild a result from its stored record (see :meth:`ResultRecord.result`).

        Raises:
            msgspec.ValidationError: ``record`` is no result record.
        """
        return ResultRecord.read(record).result(rubric_checks)


def case_of_json(body: bytes) -> Case:
    """A case from its JSON text, as the cases loader reads a line that holds one (a lone
    ``\\ud800`` escape, which pydantic's parser refuses, read as its visible escape)."""
    try:
        return Case.model_validate_json(body)
    except ValidationError as exc:
        if exc.errors(include_url=False)[0]["type"] != "json_invalid":
            raise
        data = json_with_surrogates(body)
        # deeper than pydantic's parser reads: the standard library's limit is the loader's
        return Case.model_validate(json.loads(body) if data is NOT_JSON else data)
