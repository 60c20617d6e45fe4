"""The stored form of one execution's result (:class:`ResultRecord`): the one definition the
store writes and reads, ``--json`` exports and ``checkweigh schema result`` prints.

The records are msgspec structs (once per case, on the hot paths of writing a run and of
reading it back): building and encoding one costs about half a microsecond more than the
hand-built dict it replaced did with orjson, and reading one back, validated and typed, costs
less than reading that dict did.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from .._text import safe_data
from ..errors import InputError
from ._outcome import OutcomeClass
from ._scoring import EvaluationResult, ScoreStatus
from ._usage import MAX_TOKENS, CaseUsage
from ._verdict import Verdict, VerdictState, measured

if TYPE_CHECKING:
    from ._result import CaseResult

RECORD_VERSION = 2
"""The version of the result record's shape (:class:`ResultRecord`): 1 had no
``schema_version``; 2 added it (the case and judge exchanges are stored beside the record)."""


class VerdictRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """One check's verdict as stored."""

    state: Annotated[VerdictState, Meta(description="passed, failed, not_applicable or errored.")]
    reason: Annotated[str, Meta(description="Why.")] = ""
    error: Annotated[str | None, Meta(description="What went wrong, for an errored verdict.")] = (
        None
    )
    measures: Annotated[
        dict[str, float] | None,
        Meta(
            description="The numbers it was decided from (a metric's score, a judge's flip rate)."
        ),
    ] = None

    @classmethod
    def of(cls, verdict: Verdict) -> VerdictRecord:
        """The record of ``verdict``."""
        state, reason, error = verdict
        if type(verdict) is not Verdict and verdict.measures:
            return cls(state, reason, error, verdict.measures)
        return cls(state, reason, error)

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready builtins."""
        return msgspec.to_builtins(self)  # type: ignore[no-any-return]

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> VerdictRecord:
        """A stored verdict record, validated.

        Raises:
            InputError: the data is no verdict record.
        """
        try:
            return _convert(data, cls)
        except msgspec.ValidationError as exc:
            field, message = _located(exc, data)
            raise InputError(message, field=field) from None

    def verdict(self) -> Verdict:
        """The verdict this record stores."""
        verdict = _new(Verdict, (self.state, self.reason, self.error))
        return measured(verdict, self.measures) if self.measures else verdict


class ScoreRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One rubric's result as stored."""

    status: Annotated[ScoreStatus, Meta(description="scored, errored or not_applicable.")]
    score: Annotated[float | None, Meta(description="0-1, when scored.")]
    outcome: Annotated[OutcomeClass | None, Meta(description="The outcome class its rules gave.")]
    excluded: Annotated[
        tuple[str, ...], Meta(description="Checks left out as not applicable.")
    ] = ()
    required_failed: Annotated[
        tuple[str, ...], Meta(description="Required checks that failed.")
    ] = ()
    errored: Annotated[tuple[str, ...], Meta(description="Checks that errored.")] = ()
    outcome_rule: Annotated[
        int, Meta(description="The index of the outcome rule that classed it (-1: none).")
    ] = -1


class UsageRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What the agent consumed, as its log recorded."""

    input_tokens: Annotated[int, Meta(ge=0, le=MAX_TOKENS)] | None = None
    output_tokens: Annotated[int, Meta(ge=0, le=MAX_TOKENS)] | None = None
    cost_usd: float | None = None

    @classmethod
    def of(cls, usage: CaseUsage) -> UsageRecord:
        """The record of ``usage``; a token count no JSON reader takes as an integer (one
        that user code gave, past :data:`~checkweigh.core._usage.MAX_TOKENS`) is unknown."""
        tokens_in, tokens_out, cost = usage
        if tokens_in is not None and not 0 <= tokens_in <= MAX_TOKENS:
            tokens_in = None
        if tokens_out is not None and not 0 <= tokens_out <= MAX_TOKENS:
            tokens_out = None
        return cls(tokens_in, tokens_out, cost)


class ResultRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """One execution of one case as stored (``case_results.record``) and exported (each item
    of ``results`` in ``--json``, which adds the case verdict and, with ``--json-cases``, the
    evaluated case)."""

    schema_version: Annotated[
        int,
        Meta(description="RECORD_VERSION when written; 1 for records stored before it existed."),
    ] = 1
    case_id: Annotated[str, Meta(description="The case's id.")]
    repeat: Annotated[int, Meta(description="Which execution of the case (from 0).")]
    position: Annotated[int, Meta(description="The case's position in its cases file.")] = 0
    latency_ms: Annotated[float | None, Meta(description="How long the agent took.")] = None
    agent_error: Annotated[
        str | None,
        Meta(description="The agent's error, when it failed (then there are no verdicts)."),
    ] = None
    usage: Annotated[
        UsageRecord | UnsetType | None,
        Meta(description="Tokens and cost, when the log recorded them (else left out)."),
    ] = UNSET
    verdicts: Annotated[
        dict[str, VerdictRecord], Meta(description="Every check's verdict, by name.")
    ]
    scores: Annotated[dict[str, ScoreRecord], Meta(description="Every rubric's result, by name.")]

    @classmethod
    def of(cls, result: CaseResult) -> ResultRecord:
        """The record of ``result``."""
        of_verdict, plain = VerdictRecord.of, VerdictRecord
        usage = result.usage
        return cls(
            schema_version=RECORD_VERSION,
            case_id=result.case_id,
            repeat=result.repeat,
            position=result.position,
            latency_ms=result.latency_ms,
            agent_error=result.agent_error,
            usage=UNSET if usage is None else UsageRecord.of(usage),
            # a plain verdict is the record's first three fields: built at C speed
            verdicts={
                name: plain(*v) if type(v) is _Verdict else of_verdict(v)
                for name, v in result.verdicts.items()
            },
            scores={
                name: ScoreRecord(
                    r.status,
                    r.score,
                    r.outcome,
                    r.excluded,
                    r.required_failed,
                    r.errored,
                    r.rule,
                )
                for name, r in result.results.items()
            },
        )

    def to_json(self) -> bytes:
        """The record as JSON, as the store writes it.

        Text that no UTF-8 encoder takes (a lone surrogate that reached the result from user
        code, past the text boundary) is written as its visible escape, as everywhere else
        (see ``checkweigh._text``), rather than costing the case.
        """
        try:
            return _encode(self)
        except UnicodeEncodeError:
            return _encode(safe_data(msgspec.to_builtins(self)))

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready builtins (the JSON of :meth:`to_json`, not yet text)."""
        return msgspec.to_builtins(self)  # type: ignore[no-any-return]

    @classmethod
    def read(cls, data: bytes | str | Mapping[str, Any]) -> ResultRecord:
        """A stored record (its JSON, or the JSON already parsed), validated.

        Raises:
            InputError: the data is no result record; its ``field`` is where, as a dotted
                path (``verdicts.correct_time.state``).
        """
        try:
            if isinstance(data, bytes | str):
                return _decode(data)
            return _convert(data, cls)
        except msgspec.ValidationError as exc:
            field, message = _located(exc, data)
            raise InputError(message, field=field) from None
        except msgspec.DecodeError as exc:
            raise InputError(f"not a JSON record: {exc}") from None

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The JSON Schema of the record, as ``checkweigh schema result`` prints it."""
        schema: dict[str, Any] = msgspec.json.schema(cls)
        defs: dict[str, Any] = schema.pop("$defs")
        for shape in defs.values():  # docstrings, as pydantic shows them
            if "description" in shape:
                shape["description"] = inspect.cleandoc(shape["description"])
        # the record itself at the top, as the other schemas have theirs, its parts in $defs
        root = defs.pop(schema.pop("$ref").rsplit("/", 1)[-1])
        return {**schema, **root, "$defs": defs}

    def result(self, rubric_checks: Mapping[str, Sequence[str]] | None = None) -> CaseResult:
        """The result this record stores (without its case and judge exchanges, which are
        stored beside it).

        ``rubric_checks`` names each rubric's checks (from the run's snapshot) so that a
        rubric's details hold only its own verdicts; without it every verdict is attached.
        """
        from ._result import CaseResult

        verdicts = {name: v.verdict() for name, v in self.verdicts.items()}
        results: dict[str, EvaluationResult] = {}
        for name, s in self.scores.items():
            names = (rubric_checks or {}).get(name) or verdicts
            results[name] = _new(
                EvaluationResult,
                (
                    name,
                    s.status,
                    s.score,
                    s.outcome,
                    {n: verdicts[n] for n in names if n in verdicts},
                    s.excluded,
                    s.required_failed,
                    s.errored,
                    s.outcome_rule,
                ),
            )
        return CaseResult(
            case_id=self.case_id,
            repeat=self.repeat,
            verdicts=verdicts,
            results=results,
            latency_ms=self.latency_ms,
            agent_error=self.agent_error,
            position=self.position,
            usage=_usage(self.usage),
        )


_ENTRY: dict[str, type] = {"verdicts": VerdictRecord, "scores": ScoreRecord, "measures": float}


def _usage(usage: UsageRecord | UnsetType | None) -> CaseUsage | None:
    if isinstance(usage, UsageRecord):
        return _new(CaseUsage, msgspec.structs.astuple(usage))
    return None


_AT = re.compile(r"(.*) - at `\$(.*)`", re.DOTALL)
_STEP = re.compile(r"\.(\w+)|\[(\d+)\]|(\[\.\.\.\])")
_MISSING = re.compile(r"Object missing required field `(.+)`")
_ENUMS: dict[str, type[StrEnum]] = {
    "state": VerdictState,
    "status": ScoreStatus,
    "outcome": OutcomeClass,
}


def _located(exc: msgspec.ValidationError, data: object) -> tuple[str | None, str]:
    """Where msgspec's error is, as a dotted path with the keys of the data's dicts (msgspec
    writes ``[...]`` for a key), and what it says."""
    found = _AT.fullmatch(str(exc))
    message, path = (found[1], found[2]) if found else (str(exc), "")
    steps: list[str] = []
    value: Any = data if isinstance(data, Mapping) else None
    for name, index, key in _STEP.findall(path):
        if key and isinstance(value, Mapping):
            # the first entry that fails on its own is the one msgspec met
            kind = _ENTRY.get(steps[-1] if steps else "", object)
            name = next((str(k) for k, v in value.items() if _fails(v, kind)), "...")
        elif index:
            name = index
        steps.append(name)
        value = value.get(name) if isinstance(value, Mapping) else None
    if missing := _MISSING.fullmatch(message):
        steps.append(missing[1])
        message = "Field required"
    elif message.startswith("Invalid enum value") and steps and steps[-1] in _ENUMS:
        allowed = ", ".join(repr(m.value) for m in _ENUMS[steps[-1]])
        message = f"{message}; expected one of {allowed}"
    return (".".join(steps) or None), message


def _fails(value: object, kind: type) -> bool:
    try:
        _convert(value, kind)
    except msgspec.ValidationError:
        return True
    return False


_Verdict = Verdict
_new = tuple.__new__
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(ResultRecord).decode
_convert = msgspec.convert
