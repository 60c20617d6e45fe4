"""The check library: built-in field and trajectory checks, and user checks.

Every built-in check is a validated model usable from Python (``Equals(path=..., value=...)``)
and from a suite file (``type: equals``); a user's check is a ``@check`` function or a class
with an ``evaluate(case)`` method. A :class:`CheckRegistry` names the types a suite may use.
"""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._base import (
        SKIPPED,
        Answers,
        CheckAnswer,
        CheckLike,
        FunctionCheck,
        NamedCheck,
        check,
        to_verdict,
    )
    from ._fields import (
        Contains,
        Equals,
        JsonSchema,
        Length,
        OneOf,
        Regex,
        SetEquals,
        WithinTolerance,
        WordCount,
    )
    from ._model import BuiltinCheck
    from ._python import ImportTargetError, PythonCheck, load_object, resolve_python_check
    from ._registry import (
        NO_JUDGE_HINT,
        OVERALL,
        CheckRegistry,
        all_keys,
        decides_pass,
        needs_judge,
        type_name,
        verdict_names,
        yaml_keys,
    )
    from ._trajectory import (
        ArgsOverride,
        Before,
        Count,
        NeverAfter,
        ReferenceCall,
        StepMatch,
        ToolCalled,
        TrajectoryMatch,
        WithinFirst,
    )
    from ._watch import PathWatch, Probe
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(
        __name__,
        {
            "SKIPPED": "._base",
            "Answers": "._base",
            "CheckAnswer": "._base",
            "CheckLike": "._base",
            "FunctionCheck": "._base",
            "NamedCheck": "._base",
            "check": "._base",
            "to_verdict": "._base",
            "Contains": "._fields",
            "Equals": "._fields",
            "JsonSchema": "._fields",
            "Length": "._fields",
            "OneOf": "._fields",
            "Regex": "._fields",
            "SetEquals": "._fields",
            "WithinTolerance": "._fields",
            "WordCount": "._fields",
            "BuiltinCheck": "._model",
            "ImportTargetError": "._python",
            "PythonCheck": "._python",
            "load_object": "._python",
            "resolve_python_check": "._python",
            "NO_JUDGE_HINT": "._registry",
            "OVERALL": "._registry",
            "CheckRegistry": "._registry",
            "all_keys": "._registry",
            "decides_pass": "._registry",
            "needs_judge": "._registry",
            "type_name": "._registry",
            "verdict_names": "._registry",
            "yaml_keys": "._registry",
            "ArgsOverride": "._trajectory",
            "Before": "._trajectory",
            "Count": "._trajectory",
            "NeverAfter": "._trajectory",
            "ReferenceCall": "._trajectory",
            "StepMatch": "._trajectory",
            "ToolCalled": "._trajectory",
            "TrajectoryMatch": "._trajectory",
            "WithinFirst": "._trajectory",
            "PathWatch": "._watch",
            "Probe": "._watch",
        },
    )

__all__ = [
    "NO_JUDGE_HINT",
    "OVERALL",
    "SKIPPED",
    "Answers",
    "ArgsOverride",
    "Before",
    "BuiltinCheck",
    "CheckAnswer",
    "CheckLike",
    "CheckRegistry",
    "Contains",
    "Count",
    "Equals",
    "FunctionCheck",
    "ImportTargetError",
    "JsonSchema",
    "Length",
    "NamedCheck",
    "NeverAfter",
    "OneOf",
    "PathWatch",
    "Probe",
    "PythonCheck",
    "ReferenceCall",
    "Regex",
    "SetEquals",
    "StepMatch",
    "ToolCalled",
    "TrajectoryMatch",
    "WithinFirst",
    "WithinTolerance",
    "WordCount",
    "all_keys",
    "check",
    "decides_pass",
    "load_object",
    "needs_judge",
    "resolve_python_check",
    "to_verdict",
    "type_name",
    "verdict_names",
    "yaml_keys",
]
