"""Suite files and cases files: loading, strict validation and one-line errors."""

from ._cases import (
    case_of_line,
    count_cases,
    is_blank,
    iter_cases,
    iter_sourced,
    numbered_lines,
)
from ._check_types import BUILTIN_CHECKS
from ._http import ReplySpec
from ._loader import load_suite
from ._schema import (
    BandsSpec,
    CasesSpec,
    ConditionSpec,
    GateSpec,
    OutcomeDefaults,
    OutcomeRuleSpec,
    RubricSpec,
    SuiteSpec,
    WeightSpec,
)
from ._source import CasesSource, load_mapping
from ._suite import Suite
from ._targets import (
    TARGET_KINDS,
    CommandTargetSpec,
    HttpTargetSpec,
    PythonTargetSpec,
    TargetSpec,
)

__all__ = [
    "case_of_line",
    "is_blank",
    "numbered_lines",
    "BUILTIN_CHECKS",
    "BandsSpec",
    "CasesSource",
    "CasesSpec",
    "CommandTargetSpec",
    "ConditionSpec",
    "GateSpec",
    "HttpTargetSpec",
    "OutcomeDefaults",
    "OutcomeRuleSpec",
    "RubricSpec",
    "Suite",
    "PythonTargetSpec",
    "ReplySpec",
    "SuiteSpec",
    "TARGET_KINDS",
    "TargetSpec",
    "WeightSpec",
    "count_cases",
    "iter_cases",
    "iter_sourced",
    "load_mapping",
    "load_suite",
]
