"""The check library: built-in field and trajectory checks, and user checks.

Every built-in check is a validated model usable from Python (``Equals(path=..., value=...)``)
and from a suite file (``type: equals``); a user's check is a ``@check`` function or a class
with an ``evaluate(case)`` method. A :class:`CheckRegistry` names the types a suite may use.
"""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._base import SKIPPED as SKIPPED
    from ._base import Answers as Answers
    from ._base import CheckAnswer as CheckAnswer
    from ._base import CheckLike as CheckLike
    from ._base import FunctionCheck as FunctionCheck
    from ._base import NamedCheck as NamedCheck
    from ._base import check as check
    from ._base import to_verdict as to_verdict
    from ._fields import Contains as Contains
    from ._fields import Equals as Equals
    from ._fields import JsonSchema as JsonSchema
    from ._fields import Length as Length
    from ._fields import OneOf as OneOf
    from ._fields import Regex as Regex
    from ._fields import SetEquals as SetEquals
    from ._fields import WithinTolerance as WithinTolerance
    from ._fields import WordCount as WordCount
    from ._model import BuiltinCheck as BuiltinCheck
    from ._model import parse_path as parse_path
    from ._python import ImportTargetError as ImportTargetError
    from ._python import PythonCheck as PythonCheck
    from ._python import load_object as load_object
    from ._python import resolve_python_check as resolve_python_check
    from ._registry import NO_JUDGE_HINT as NO_JUDGE_HINT
    from ._registry import OVERALL as OVERALL
    from ._registry import CheckRegistry as CheckRegistry
    from ._registry import all_keys as all_keys
    from ._registry import decides_pass as decides_pass
    from ._registry import needs_judge as needs_judge
    from ._registry import type_name as type_name
    from ._registry import verdict_names as verdict_names
    from ._registry import yaml_keys as yaml_keys
    from ._trajectory import ArgsOverride as ArgsOverride
    from ._trajectory import Before as Before
    from ._trajectory import Count as Count
    from ._trajectory import NeverAfter as NeverAfter
    from ._trajectory import ReferenceCall as ReferenceCall
    from ._trajectory import StepMatch as StepMatch
    from ._trajectory import ToolCalled as ToolCalled
    from ._trajectory import TrajectoryMatch as TrajectoryMatch
    from ._trajectory import WithinFirst as WithinFirst
    from ._watch import PathWatch as PathWatch
    from ._watch import Probe as Probe
    from ._watch import Watched as Watched
    from ._watch import model_probes as model_probes
    from ._watch import unheld_note as unheld_note
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
