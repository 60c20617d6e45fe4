"""The check library: built-in field and trajectory checks, and user checks.

Every built-in check is a validated model usable from Python (``Equals(path=..., value=...)``)
and from a suite file (``type: equals``); a user's check is a ``@check`` function or a class
with an ``evaluate(case)`` method.
"""

from typing import Annotated

from pydantic import Field

from ._base import CheckAnswer, CheckLike, FunctionCheck, NamedCheck, check, to_verdict
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

BuiltinCheckType = (
    Equals
    | OneOf
    | Contains
    | Regex
    | SetEquals
    | WithinTolerance
    | Length
    | WordCount
    | JsonSchema
    | ToolCalled
    | Before
    | WithinFirst
    | NeverAfter
    | Count
    | TrajectoryMatch
    | PythonCheck
)
"""The union of the built-in check models."""

CheckSpec = Annotated[BuiltinCheckType, Field(discriminator="type")]
"""Any built-in check a suite file can declare, told apart by its ``type``."""

__all__ = [
    "ArgsOverride",
    "Before",
    "BuiltinCheck",
    "BuiltinCheckType",
    "CheckAnswer",
    "CheckLike",
    "CheckSpec",
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
    "check",
    "load_object",
    "resolve_python_check",
    "to_verdict",
]
