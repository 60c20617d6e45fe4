"""The pure core: cases, verdicts, rubrics, the scoring formula, outcomes and aggregates.

Nothing here does I/O; everything that touches files, agents or databases calls into it.
"""

from ._aggregate import RunAggregator
from ._alignment import (
    AlignmentFigures,
    AlignmentReport,
    CheckAlignment,
    Confusion,
    Disagreement,
    HumanLabel,
    KappaBand,
    LabelPair,
    NotCompared,
    align,
    kappa_band,
    pair_labels,
)
from ._case import Case, Step, StepKind
from ._case_pass import (
    DEFAULT_CASES_PASS_THRESHOLD,
    DEFAULT_METRICS_PASS_THRESHOLD,
    DEFAULT_PASS_THRESHOLD,
    CaseState,
    CaseTally,
    CaseVerdict,
    PassPolicy,
)
from ._conditions import Condition, ConditionOp, strict_equal
from ._gates import DEFAULT_GATES, Gate, GateMetric, apply_gates
from ._outcome import OutcomeClass, OutcomeRule, classify, default_outcome_rules
from ._paths import FieldPath, PathSyntaxError
from ._result import CaseResult
from ._rubric import Bands, NotApplicablePolicy, Rubric, RubricError, RubricItem
from ._scoring import EvaluationResult, ScoreStatus, score_rubric
from ._stats import mean_interval, t_quantile, wilson_interval
from ._summary import (
    CaseGates,
    CaseVariance,
    CheckStats,
    FailingCase,
    GateResult,
    JudgeStats,
    RubricSummary,
    RunSummary,
    SlowCase,
    WorstCase,
)
from ._verdict import (
    MeasuredVerdict,
    Verdict,
    VerdictState,
    errored,
    failed,
    from_bool,
    measured,
    not_applicable,
    passed,
)

__all__ = [
    "AlignmentFigures",
    "AlignmentReport",
    "CheckAlignment",
    "Confusion",
    "Disagreement",
    "HumanLabel",
    "KappaBand",
    "LabelPair",
    "NotCompared",
    "align",
    "kappa_band",
    "pair_labels",
    "DEFAULT_CASES_PASS_THRESHOLD",
    "DEFAULT_METRICS_PASS_THRESHOLD",
    "DEFAULT_PASS_THRESHOLD",
    "CaseGates",
    "CaseState",
    "CaseTally",
    "CaseVerdict",
    "FailingCase",
    "PassPolicy",
    "DEFAULT_GATES",
    "Bands",
    "Case",
    "CaseResult",
    "CaseVariance",
    "CheckStats",
    "Condition",
    "ConditionOp",
    "EvaluationResult",
    "FieldPath",
    "Gate",
    "GateMetric",
    "GateResult",
    "MeasuredVerdict",
    "JudgeStats",
    "NotApplicablePolicy",
    "OutcomeClass",
    "OutcomeRule",
    "PathSyntaxError",
    "Rubric",
    "RubricError",
    "RubricItem",
    "RubricSummary",
    "RunAggregator",
    "RunSummary",
    "ScoreStatus",
    "SlowCase",
    "Step",
    "StepKind",
    "Verdict",
    "VerdictState",
    "WorstCase",
    "apply_gates",
    "classify",
    "default_outcome_rules",
    "errored",
    "failed",
    "from_bool",
    "mean_interval",
    "measured",
    "not_applicable",
    "passed",
    "score_rubric",
    "strict_equal",
    "t_quantile",
    "wilson_interval",
]
