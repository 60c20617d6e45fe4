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
    from ._check_types import BUILTIN_CHECKS, CHECK_TYPES
    from ._command import CommandSpecError, ResolvedCommand, resolve_command
    from ._conversations import check_conversations
    from ._errors import first_error, loc_text
    from ._http import BODY_REF, ENV_REF, ReplySpec, env_names, env_url_problem
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
        TARGETS,
        CommandTargetSpec,
        HttpTargetSpec,
        PythonTargetSpec,
        TargetKind,
        TargetSpec,
        TargetSpecBase,
    )
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
            "BUILTIN_CHECKS": "._check_types",
            "CHECK_TYPES": "._check_types",
            "check_conversations": "._conversations",
            "CommandSpecError": "._command",
            "ResolvedCommand": "._command",
            "resolve_command": "._command",
            "first_error": "._errors",
            "loc_text": "._errors",
            "BODY_REF": "._http",
            "ENV_REF": "._http",
            "ReplySpec": "._http",
            "env_names": "._http",
            "env_url_problem": "._http",
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
            "TARGETS": "._targets",
            "TargetKind": "._targets",
            "TargetSpecBase": "._targets",
            "CommandTargetSpec": "._targets",
            "HttpTargetSpec": "._targets",
            "PythonTargetSpec": "._targets",
            "TargetSpec": "._targets",
        },
    )

__all__ = [
    "BODY_REF",
    "CommandSpecError",
    "ENV_REF",
    "ResolvedCommand",
    "TARGETS",
    "TargetKind",
    "TargetSpecBase",
    "env_names",
    "env_url_problem",
    "first_error",
    "loc_text",
    "resolve_command",
    "case_of_line",
    "check_conversations",
    "is_blank",
    "numbered_lines",
    "BUILTIN_CHECKS",
    "CHECK_TYPES",
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
