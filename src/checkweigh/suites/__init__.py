"""Suite files and cases files: loading, strict validation and one-line errors."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._cases import (
        case_of_line,
        count_cases,
        is_blank,
        iter_cases,
        iter_sourced,
        numbered_lines,
    )
    from ._check_types import BUILTIN_CHECKS
    from ._conversations import check_conversations
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
    from ._text import shown
    from ._unique import UniqueIds, id_of_case
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(
        __name__,
        {
            "case_of_line": "._cases",
            "count_cases": "._cases",
            "is_blank": "._cases",
            "numbered_lines": "._cases",
            "iter_cases": "._cases",
            "iter_sourced": "._cases",
            "shown": "._text",
            "UniqueIds": "._unique",
            "id_of_case": "._unique",
            "BUILTIN_CHECKS": "._check_types",
            "check_conversations": "._conversations",
            "ReplySpec": "._http",
            "load_suite": "._loader",
            "BandsSpec": "._schema",
            "CasesSpec": "._schema",
            "ConditionSpec": "._schema",
            "GateSpec": "._schema",
            "OutcomeDefaults": "._schema",
            "OutcomeRuleSpec": "._schema",
            "RubricSpec": "._schema",
            "SuiteSpec": "._schema",
            "WeightSpec": "._schema",
            "CasesSource": "._source",
            "load_mapping": "._source",
            "Suite": "._suite",
            "TARGET_KINDS": "._targets",
            "CommandTargetSpec": "._targets",
            "HttpTargetSpec": "._targets",
            "PythonTargetSpec": "._targets",
            "TargetSpec": "._targets",
        },
    )

__all__ = [
    "case_of_line",
    "check_conversations",
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
    "UniqueIds",
    "WeightSpec",
    "count_cases",
    "id_of_case",
    "iter_cases",
    "iter_sourced",
    "load_mapping",
    "load_suite",
    "shown",
]
