"""The built-in check types: the one table a suite file's ``type:`` is looked up in.

A new built-in check is one module (a model with a ``type`` literal and ``evaluate``), its
test, and one line here. A suite's own classes are added per call
(``load_suite(path, extra_types=[...])``) or named by dotted path in the file; an installed
package's arrive through the ``checkweigh.checks`` entry-point group (:data:`CHECK_TYPES`).
"""

from __future__ import annotations

from pydantic import BaseModel

from ..checks import (
    Before,
    CheckRegistry,
    Contains,
    Count,
    Equals,
    JsonSchema,
    Length,
    NeverAfter,
    OneOf,
    PythonCheck,
    Regex,
    SetEquals,
    ToolCalled,
    TrajectoryMatch,
    WithinFirst,
    WithinTolerance,
    WordCount,
    type_name,
)
from ..judges import (
    ExpectedOutcomesCheck,
    FaithfulnessCheck,
    GoalAccuracyCheck,
    GradedJudgeCheck,
    JudgeCheck,
)
from ..plugins import PluginError, Registry

BUILTIN_CHECKS = CheckRegistry.of(
    # the value at a path
    Equals,
    OneOf,
    Contains,
    Regex,
    SetEquals,
    WithinTolerance,
    Length,
    WordCount,
    JsonSchema,
    # the steps of the trace
    ToolCalled,
    Before,
    WithinFirst,
    NeverAfter,
    Count,
    TrajectoryMatch,
    # the user's own code
    PythonCheck,
    # asked of the run's judge
    JudgeCheck,
    ExpectedOutcomesCheck,
    FaithfulnessCheck,
    GoalAccuracyCheck,
    GradedJudgeCheck,
)
"""Every built-in check type, in the order error messages list them."""


def _check_class(value: object) -> type[BaseModel]:
    """A plugin's entry as a check class: a model with a ``type`` literal and ``evaluate``."""
    if not (isinstance(value, type) and issubclass(value, BaseModel)):
        raise TypeError(f"expected a check model class, got {value!r}")
    type_name(value)  # raises TypeError naming the missing `type` literal
    if not callable(getattr(value, "evaluate", None)):
        raise TypeError(f"{value.__qualname__} has no evaluate method")
    return value


CHECK_TYPES: Registry[type[BaseModel]] = Registry(
    "checks",
    {
        n: f"{m.__module__}:{m.__qualname__}"
        for n, m in zip(BUILTIN_CHECKS, BUILTIN_CHECKS.classes(), strict=True)
    },
    package="checkweigh",
    label="check type",
    accept=_check_class,
)
"""Check types by name for lookups by name: the built-ins (:data:`BUILTIN_CHECKS`, the one
table) and the installed plugins' (entry-point group ``checkweigh.checks``), whose entries
are read only when a suite names a type that is not built-in."""


def plugin_check(name: str) -> type[BaseModel] | None:
    """The check class an installed plugin registers as ``name`` (None: no plugin does).

    Raises:
        PluginError: the plugin's entry point does not load, is not a check class, or its
            class's ``type`` is not ``name``.
    """
    if name in BUILTIN_CHECKS or name not in CHECK_TYPES:
        return None
    model = CHECK_TYPES.get(name)
    declared = type_name(model)
    if declared != name:
        raise PluginError(
            f"check type plugin {name!r} ({CHECK_TYPES.group}) is "
            f"{model.__module__}.{model.__qualname__}, whose type is {declared!r}: the entry "
            "point's name and the class's `type` must be the same"
        )
    return model


def plugin_check_names() -> tuple[str, ...]:
    """The names of the installed plugins' check types (reads the entry points)."""
    return tuple(n for n in CHECK_TYPES.names() if n not in BUILTIN_CHECKS)
