"""The result of one execution of one case: every verdict and every rubric's score."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, cast

from pydantic import ValidationError

from .._text import NOT_JSON, json_with_surrogates
from ._case import Case
from ._exchange import JudgeExchange
from ._outcome import OutcomeClass
from ._scoring import EvaluationResult, ScoreStatus
from ._usage import CaseUsage
from ._verdict import Verdict

RECORD_VERSION = 2
"""The version of the result record's shape (:class:`checkweigh.store.ResultRecord`): 1 had no
``schema_version``; 2 added it (the case and judge exchanges are stored beside the record)."""


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
        """A JSON-ready form, as stored and exported."""
        verdicts: dict[str, Any] = {}
        for name, v in self.verdicts.items():
            # VerdictState is a str enum: it serializes as its value
            entry: dict[str, Any] = {"state": v.state, "reason": v.reason}
            if v.error is not None:
                entry["error"] = v.error
            if type(v) is not Verdict and v.measures:
                entry["measures"] = v.measures
            verdicts[name] = entry
        return {
            "schema_version": RECORD_VERSION,
            "case_id": self.case_id,
            "repeat": self.repeat,
            "position": self.position,
            "latency_ms": self.latency_ms,
            "agent_error": self.agent_error,
            **({"usage": self.usage.to_dict()} if self.usage is not None else {}),
            "verdicts": verdicts,
            "scores": {
                name: {
                    "status": r.status,
                    "score": r.score,
                    "outcome": r.outcome,
                    "excluded": r.excluded,
                    "required_failed": r.required_failed,
                    "errored": r.errored,
                    "outcome_rule": r.rule,
                }
                for name, r in self.results.items()
            },
        }

    @classmethod
    def from_record(
        cls, record: Mapping[str, Any], rubric_checks: Mapping[str, Sequence[str]] | None = None
    ) -> CaseResult:
        """Rebuild a result stored with :meth:`to_record`.

        ``rubric_checks`` names each rubric's checks (from the run's snapshot) so that a rubric's
        details hold only its own verdicts; without it every verdict is attached.
        """
        verdicts = {n: Verdict.from_dict(v) for n, v in record["verdicts"].items()}
        results: dict[str, EvaluationResult] = {}
        for name, s in record["scores"].items():
            names = (rubric_checks or {}).get(name) or list(verdicts)
            results[name] = EvaluationResult(
                rubric=name,
                status=ScoreStatus(s["status"]),
                score=s["score"],
                outcome=OutcomeClass(s["outcome"]) if s["outcome"] else None,
                details={n: verdicts[n] for n in names if n in verdicts},
                excluded=tuple(s.get("excluded", ())),
                required_failed=tuple(s.get("required_failed", ())),
                errored=tuple(s.get("errored", ())),
                rule=s.get("outcome_rule", -1),
            )
        return cls(
            case_id=record["case_id"],
            repeat=record["repeat"],
            verdicts=verdicts,
            results=results,
            latency_ms=record.get("latency_ms"),
            agent_error=record.get("agent_error"),
            position=record.get("position", 0),
            usage=CaseUsage(**usage) if (usage := record.get("usage")) else None,
        )


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
