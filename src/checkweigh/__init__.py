"""checkweigh: evaluate LLM agents with binary weighted checks.

Every criterion is a yes/no check; a rubric weighs the checks into a score from 0 to 1;
ordered rules turn score and state into an outcome class; runs aggregate into a Task
Completion Rate with its uncertainty, per-check pass rates and CI gates.

>>> import checkweigh as cw
>>> rubric = cw.Rubric.build("completion", [cw.RubricItem("correct_time", 1.0)])
"""

import typing as _typing

from . import _lazy
from .errors import CaseFileError as CaseFileError
from .errors import CheckweighError as CheckweighError
from .errors import InputError as InputError
from .errors import StoreError as StoreError
from .errors import SuiteError as SuiteError
from .errors import TargetError as TargetError

if _typing.TYPE_CHECKING:
    from .checks import Before as Before
    from .checks import Contains as Contains
    from .checks import Count as Count
    from .checks import Equals as Equals
    from .checks import JsonSchema as JsonSchema
    from .checks import Length as Length
    from .checks import NamedCheck as NamedCheck
    from .checks import NeverAfter as NeverAfter
    from .checks import OneOf as OneOf
    from .checks import PythonCheck as PythonCheck
    from .checks import Regex as Regex
    from .checks import SetEquals as SetEquals
    from .checks import StepMatch as StepMatch
    from .checks import ToolCalled as ToolCalled
    from .checks import TrajectoryMatch as TrajectoryMatch
    from .checks import WithinFirst as WithinFirst
    from .checks import WithinTolerance as WithinTolerance
    from .checks import WordCount as WordCount
    from .checks import check as check
    from .core import Bands as Bands
    from .core import Case as Case
    from .core import CaseResult as CaseResult
    from .core import Condition as Condition
    from .core import ConditionOp as ConditionOp
    from .core import EvaluationResult as EvaluationResult
    from .core import FieldPath as FieldPath
    from .core import Gate as Gate
    from .core import GateMetric as GateMetric
    from .core import NotApplicablePolicy as NotApplicablePolicy
    from .core import OutcomeClass as OutcomeClass
    from .core import OutcomeRule as OutcomeRule
    from .core import Rubric as Rubric
    from .core import RubricItem as RubricItem
    from .core import RunAggregator as RunAggregator
    from .core import RunSummary as RunSummary
    from .core import ScoreStatus as ScoreStatus
    from .core import Step as Step
    from .core import Verdict as Verdict
    from .core import VerdictState as VerdictState
    from .core import default_outcome_rules as default_outcome_rules
    from .core import errored as errored
    from .core import failed as failed
    from .core import not_applicable as not_applicable
    from .core import passed as passed
    from .core import score_rubric as score_rubric
    from .runs import AgentRun as AgentRun
    from .runs import Evaluator as Evaluator
    from .runs import RunOptions as RunOptions
    from .runs import RunReport as RunReport
    from .runs import aexecute as aexecute
    from .runs import arun as arun
    from .runs import arun_cases as arun_cases
    from .runs import execute as execute
    from .runs import run as run
    from .runs import run_cases as run_cases
    from .store import Store as Store
    from .suites import Suite as Suite
    from .suites import iter_cases as iter_cases
    from .suites import load_suite as load_suite
else:  # the names load when first read (see checkweigh._lazy): `import checkweigh` stays cheap
    __getattr__, __dir__ = _lazy.exports(__name__)

__version__ = "0.1.0"
