"""The check library: built-in field and trajectory checks, and user checks.

Every built-in check is a validated model usable from Python (``Equals(path=..., value=...)``)
and from a suite file (``type: equals``); a user's check is a ``@check`` function or a class
with an ``evaluate(case)`` method. A :class:`CheckRegistry` names the types a suite may use.
"""

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
