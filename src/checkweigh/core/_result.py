"""The result of one execution of one case: every verdict and every rubric's score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ._case import Case
from ._exchange import JudgeExchange
from ._outcome import OutcomeClass
from ._scoring import EvaluationResult, ScoreStatus
from ._usage import CaseUsage
from ._verdict import Verdict

RECORD_VERSION = 2
"""The version of the result record's shape (:class:`checkweigh.store.ResultRecord`): 1 had no
``schema_version``; 2 added it (the case and judge exchanges are stored beside the record)."""


class CaseResult(NamedTuple):
    """One case run once (``repeat`` counts from 0), scored on every rubric of the suite."""

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
    """The case as evaluated (after the agent ran), stored beside the result; None when
    rebuilt from a record."""
    body: bytes | None = None
    """``case`` as the JSON line it was read from, when it was evaluated unchanged: the store
    keeps these bytes instead of serializing the case again."""
    exchanges: tuple[JudgeExchange, ...] = ()
    """Every judge call made for this execution, in the order made."""

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
