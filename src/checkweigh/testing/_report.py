"""The text a failed test shows for one case: its verdict, each rubric's score and outcome, and
one line per failed or errored check. Pure: it reads a result and returns a string. Case ids,
check names and reasons are shown with their control characters escaped: a test report is
printed on a terminal."""

from __future__ import annotations

from collections.abc import Sequence

from ..core import CaseResult, CaseVerdict, EvaluationResult, ScoreStatus, VerdictState
from ..reports import clean


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _rubric_line(result: EvaluationResult) -> str:
    if result.status is ScoreStatus.NOT_APPLICABLE:
        return f"{result.rubric}: not applicable to this case"
    if result.status is ScoreStatus.ERRORED:
        return f"{result.rubric}: not scored ({', '.join(result.errored)} errored)"
    assert result.score is not None
    assert result.outcome is not None
    return f"{result.rubric}: score {result.score:.2f}, {result.outcome.value.replace('_', ' ')}"


def case_report(
    result: CaseResult,
    verdict: CaseVerdict,
    *,
    pass_threshold: float,
    skipped_judge: Sequence[str] = (),
    judge_hint: str = "no judge configured",
    pass_rule: str | None = None,
) -> str:
    """A case's verdict as lines a person reads in a test failure.

    Args:
        result: the case's verdicts and rubric scores.
        verdict: its pass/fail (from :meth:`checkweigh.core.PassPolicy.decide`).
        pass_threshold: the score (0-100) the case needed.
        skipped_judge: judge checks that did not run because no judge was given.
        judge_hint: how to give one.
        pass_rule: when a case passes, in words, for a policy that reads no threshold
            (``all_checks``); the header then names it instead of ``pass_threshold``.

    Returns:
        The header (case id, state, score), the verdict's reason, one line per rubric, then
        ``- name: reason`` for each failed check and ``- name: error`` for each errored one.
    """
    score = "no score" if verdict.score_pct is None else f"score {verdict.score_pct:.1f}"
    rule = f"pass threshold {pass_threshold:g}" if pass_rule is None else f"case pass: {pass_rule}"
    lines = [
        f"checkweigh: case {result.case_id!r} {verdict.state.value}, {score} ({rule})",
        f"reason: {_one_line(verdict.reason)}",
    ]
    if result.results:
        lines.append("rubrics:")
        lines.extend(f"  {_rubric_line(r)}" for r in result.results.values())
    failed = [(n, v.reason) for n, v in result.verdicts.items() if v.state is VerdictState.FAILED]
    errored = [
        (n, v.error or v.reason)
        for n, v in result.verdicts.items()
        if v.state is VerdictState.ERRORED
    ]
    if failed:
        lines.append("failed checks:")
        lines.extend(f"  - {name}: {_one_line(reason)}" for name, reason in failed)
    if errored:
        lines.append("errored checks (they could not decide; never counted as failed):")
        lines.extend(f"  - {name}: {_one_line(error)}" for name, error in errored)
    if skipped_judge:
        lines.append(f"judge checks skipped: {', '.join(skipped_judge)} ({judge_hint})")
    return "\n".join(clean(line) for line in lines)
