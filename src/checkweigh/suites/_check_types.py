"""The built-in check types: the one table a suite file's ``type:`` is looked up in.

A new built-in check is one module (a model with a ``type`` literal and ``evaluate``), its
test, and one line here. A suite's own classes are added per call
(``load_suite(path, extra_types=[...])``) or named by dotted path in the file.
"""

from __future__ import annotations

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
)
from ..judges import (
    ExpectedOutcomesCheck,
    FaithfulnessCheck,
    GoalAccuracyCheck,
    GradedJudgeCheck,
    JudgeCheck,
)

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
