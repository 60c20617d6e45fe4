"""People's labels in the store, and the matching of labels to a run's executions.

A label is kept once per reviewer and item: a later label by the same reviewer on the same
check, case, criterion and evidence replaces the earlier one. Matching a run reads each
execution's verdict and the prompt its judge was sent (the evidence fingerprint), and gives
every execution the labels made on that very evidence under that very criterion; labels on the
same cases made under another criterion, or on other evidence, are counted as stale, never
used.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Table, delete, insert, select

from .._text import safe_text
from ..core import (
    Confusion,
    ExchangeMessage,
    Label,
    LabelSource,
    VerdictState,
    criterion_fingerprint,
    evidence_fingerprint,
)
from ._store import Store, _db_errors, _naive_utc
from ._tables import LabelRow, ResultRow

_LABELS: Table = LabelRow.__table__  # type: ignore[assignment]


def add_labels(store: Store, labels: Iterable[Label]) -> int:
    """Keep ``labels``, each replacing the same reviewer's earlier label on the same item;
    return how many were written.

    Raises:
        StoreError: the database cannot be written.
    """
    now = datetime.now(UTC)
    rows = []
    for label in labels:
        rows.append(
            {
                "check": safe_text(label.check),
                "case_id": safe_text(label.case_id),
                "label": label.label,
                "note": safe_text(label.note),
                "reviewer": safe_text(label.reviewer),
                "criterion": label.criterion,
                "evidence": label.evidence,
                "run_id": label.run_id,
                "repeat": label.repeat,
                "judge": None if label.judge is None else safe_text(label.judge),
                "verdict": label.verdict,
                "created_at": label.created_at or now,
                "source": label.source.value,
            }
        )
    if not rows:
        return 0
    if store.engine.dialect.name != "sqlite":  # PostgreSQL text cannot hold NUL: U+FFFD
        for row in rows:  # (as the results' case_id column holds it, so the two still match)
            for key, value in row.items():
                if isinstance(value, str) and "\x00" in value:
                    row[key] = value.replace("\x00", "\ufffd")
    c = _LABELS.c
    with _db_errors(f"write labels to {store.safe_url}"), store.engine.begin() as conn:
        for row in rows:
            same = (
                (c.check == row["check"])
                & (c.case_id == row["case_id"])
                & (c.reviewer == row["reviewer"])
                & c.criterion.is_not_distinct_from(row["criterion"])
                & c.evidence.is_not_distinct_from(row["evidence"])
            )
            if row["evidence"] is None:  # bound to its run and repeat
                same = (
                    same
                    & c.run_id.is_not_distinct_from(row["run_id"])
                    & c.repeat.is_not_distinct_from(row["repeat"])
                )
            conn.execute(delete(_LABELS).where(same))
        conn.execute(insert(_LABELS), rows)
    return len(rows)


def read_labels(
    store: Store, *, checks: Collection[str] | None = None, case_ids: Collection[str] | None = None
) -> list[Label]:
    """The stored labels (of ``checks`` / ``case_ids`` when given), oldest first."""
    stmt = select(_LABELS).order_by(_LABELS.c.created_at, _LABELS.c.id)
    if checks is not None:
        stmt = stmt.where(_LABELS.c.check.in_(list(checks)))
    if case_ids is not None and len(case_ids) <= 500:
        stmt = stmt.where(_LABELS.c.case_id.in_(list(case_ids)))
    with _db_errors(f"read labels from {store.safe_url}"), store.engine.connect() as conn:
        rows = list(conn.execute(stmt).mappings())
    wanted = None if case_ids is None else set(case_ids)
    return [_label(row) for row in rows if wanted is None or row["case_id"] in wanted]


def count_labels(store: Store) -> int:
    """How many labels the store holds."""
    from sqlalchemy import func

    with _db_errors(f"read labels from {store.safe_url}"), store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(_LABELS)).scalar_one())


def _label(row: Any) -> Label:
    return Label(
        check=row["check"],
        case_id=row["case_id"],
        label=bool(row["label"]),
        note=row["note"],
        reviewer=row["reviewer"],
        criterion=row["criterion"],
        evidence=row["evidence"],
        run_id=row["run_id"],
        repeat=row["repeat"],
        judge=row["judge"],
        verdict=row["verdict"],
        created_at=_naive_utc(row["created_at"]),
        source=LabelSource(row["source"]),
    )


@dataclass(frozen=True, slots=True)
class JudgedExecution:
    """One execution's verdict of one check, with what the judge was shown."""

    case_id: str
    position: int
    """The case's position in its cases file (the executions' order)."""
    repeat: int
    check: str
    state: VerdictState
    reason: str
    evidence: str | None
    """The fingerprint of the judge's first prompt for the check; None without a judge call."""
    messages: tuple[ExchangeMessage, ...]
    """That prompt (system message first); empty without a judge call."""


def judged_executions(
    store: Store, run_id: str, checks: Collection[str], *, case_ids: Collection[str] | None = None
) -> dict[str, list[JudgedExecution]]:
    """Every verdict of ``checks`` in the run (of ``case_ids`` only, when given: a label on
    one execution reads one case), per check, in run order. Executions whose agent errored
    have no verdict and are left out."""
    info = store.get_run(run_id)
    wanted = set(checks)
    out: dict[str, list[JudgedExecution]] = {name: [] for name in checks}
    stmt = (
        select(
            ResultRow.idx,
            ResultRow.case_id,
            ResultRow.repeat,
            ResultRow.record,
            ResultRow.exchanges,
        )
        .where(ResultRow.run_id == info.id)
        .order_by(ResultRow.idx, ResultRow.repeat)
        .execution_options(yield_per=1000)
    )
    if case_ids is not None:
        stmt = stmt.where(ResultRow.case_id.in_(list(case_ids)))
    with _db_errors(f"read {store.safe_url}"), store.engine.connect() as conn:
        for idx, case_id, repeat, record, exchanges in conn.execute(stmt):
            verdicts = record.get("verdicts") or {}
            prompts: dict[str, tuple[ExchangeMessage, ...]] = {}
            for exchange in exchanges or ():
                name = exchange.get("check")
                if name in wanted and name not in prompts:
                    prompts[name] = tuple(
                        ExchangeMessage(role=m["role"], content=m["content"])
                        for m in exchange.get("messages") or ()
                    )
            for name in checks:
                verdict = verdicts.get(name)
                if verdict is None:
                    continue
                messages = prompts.get(name, ())
                out[name].append(
                    JudgedExecution(
                        case_id=case_id,
                        position=idx,
                        repeat=repeat,
                        check=name,
                        state=VerdictState(verdict["state"]),
                        reason=verdict.get("reason", ""),
                        evidence=evidence_fingerprint(messages) if messages else None,
                        messages=messages,
                    )
                )
    return out


@dataclass(slots=True)
class LabelledExecution:
    """An execution and the labels made on its evidence (one per reviewer, the latest)."""

    execution: JudgedExecution
    labels: list[Label] = field(default_factory=list)

    @property
    def truth(self) -> bool | None:
        """The reviewers' majority; None without labels or when they split evenly."""
        yes = sum(label.label for label in self.labels)
        no = len(self.labels) - yes
        return None if yes == no else yes > no


@dataclass(slots=True)
class CheckLabels:
    """A check's executions in one run with the labels that apply to each."""

    check: str
    criterion: str | None
    executions: list[LabelledExecution]
    stale_criterion: int = 0
    """Labels on these cases made under another criterion (another question or version)."""
    stale_evidence: int = 0
    """Labels on these cases, under this criterion, made on evidence no execution here has."""

    @property
    def decided(self) -> list[LabelledExecution]:
        """Executions whose judge said yes or no."""
        return [e for e in self.executions if e.execution.state in _DECIDED]

    def counts(self) -> tuple[int, int]:
        """(judge yes, judge no) over the run's executions."""
        yes = sum(e.execution.state is VerdictState.PASSED for e in self.executions)
        no = sum(e.execution.state is VerdictState.FAILED for e in self.executions)
        return yes, no

    def confusion(self) -> Confusion:
        """The reviewers' majority against the judge, over decided, labelled executions."""
        confusion = Confusion()
        for e in self.decided:
            truth = e.truth
            if truth is not None:
                confusion.add(truth, e.execution.state is VerdictState.PASSED)
        return confusion

    @property
    def labelled(self) -> int:
        """Decided executions with a label (split ones included)."""
        return sum(bool(e.labels) for e in self.decided)

    @property
    def split(self) -> int:
        """Labelled executions whose reviewers split evenly (left out of the figures)."""
        return sum(bool(e.labels) and e.truth is None for e in self.decided)

    def reviewer_pairs(self) -> list[tuple[bool, bool]]:
        """The answers of the two reviewers who labelled most here (by name on a tie), each
        pair in the same reviewers' order, on every execution both labelled."""
        ranked = sorted(self.reviewers().items(), key=lambda item: (-item[1], item[0]))
        if len(ranked) < 2:
            return []
        first, second = ranked[0][0], ranked[1][0]
        pairs = []
        for e in self.decided:
            said = {label.reviewer: label.label for label in e.labels}
            if first in said and second in said:
                pairs.append((said[first], said[second]))
        return pairs

    def reviewers(self) -> Counter[str]:
        """Labels per reviewer, over this run's executions."""
        return Counter(label.reviewer for e in self.executions for label in e.labels)


_DECIDED = (VerdictState.PASSED, VerdictState.FAILED)


def criteria(config: dict[str, Any], checks: Iterable[str]) -> dict[str, str | None]:
    """Each check's criterion fingerprint, from a run's configuration."""
    snapshots = config.get("checks") or {}
    return {
        name: criterion_fingerprint(snapshots[name]) if name in snapshots else None
        for name in checks
    }


def run_labels(store: Store, run_id: str, checks: Collection[str]) -> dict[str, CheckLabels]:
    """The labels that apply to each execution of ``checks`` in the run, and those that are
    stale.

    A label applies to an execution of its check and case when both were made under the same
    criterion and either on the same evidence (the judge's prompt), or, for a label without
    evidence, in this run on this repeat (or on every repeat).
    """
    info = store.get_run(run_id)
    fingerprints = criteria(info.config, checks)
    executions = judged_executions(store, info.id, checks)
    case_ids = {e.case_id for rows in executions.values() for e in rows}
    stored = read_labels(store, checks=list(checks), case_ids=case_ids)
    by_check: dict[str, list[Label]] = {}
    for label in stored:
        by_check.setdefault(label.check, []).append(label)
    out = {}
    for name in checks:
        out[name] = _match(
            name, fingerprints[name], executions[name], by_check.get(name, []), info.id
        )
    return out


def _match(
    check: str,
    criterion: str | None,
    executions: list[JudgedExecution],
    labels: list[Label],
    run_id: str,
) -> CheckLabels:
    by_evidence: dict[tuple[str, str], dict[str, Label]] = {}
    bound: dict[tuple[str, int | None], dict[str, Label]] = {}
    stale_criterion = 0
    for label in labels:  # oldest first: a later label of a reviewer replaces an earlier one
        if label.criterion is not None and criterion is not None and label.criterion != criterion:
            stale_criterion += 1
            continue
        if label.evidence is not None:
            by_evidence.setdefault((label.case_id, label.evidence), {})[label.reviewer] = label
        elif label.run_id == run_id:
            bound.setdefault((label.case_id, label.repeat), {})[label.reviewer] = label
    used: set[tuple[str, str]] = set()
    rows = []
    for execution in executions:
        found: dict[str, Label] = {}
        if execution.evidence is not None:
            key = (execution.case_id, execution.evidence)
            if key in by_evidence:
                found.update(by_evidence[key])
                used.add(key)
        found.update(bound.get((execution.case_id, None), {}))
        found.update(bound.get((execution.case_id, execution.repeat), {}))
        rows.append(LabelledExecution(execution, list(found.values())))
    stale_evidence = sum(len(v) for k, v in by_evidence.items() if k not in used)
    return CheckLabels(
        check=check,
        criterion=criterion,
        executions=rows,
        stale_criterion=stale_criterion,
        stale_evidence=stale_evidence,
    )


def label_for(
    execution: JudgedExecution,
    *,
    criterion: str | None,
    run_id: str,
    label: bool,
    reviewer: str = "",
    note: str = "",
    judge: str | None = None,
    source: LabelSource = LabelSource.API,
) -> Label:
    """A label on ``execution``, with its fingerprints (bound to the run and repeat when the
    check made no judge call)."""
    verdict = {VerdictState.PASSED: "yes", VerdictState.FAILED: "no"}.get(execution.state)
    return Label(
        check=execution.check,
        case_id=execution.case_id,
        label=label,
        note=note,
        reviewer=reviewer,
        criterion=criterion,
        evidence=execution.evidence,
        run_id=run_id,
        repeat=execution.repeat,
        judge=judge,
        verdict=verdict,
        source=source,
    )
