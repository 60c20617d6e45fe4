"""LLM judges: the judge interface, strict yes/no answers, and trace formatting.

Judges are explicit: a judge check is one validated class whose ``async evaluate(case, judge)``
is given the run's judge when it evaluates. Provider clients (OpenAI-compatible, Anthropic,
Ollama), caching and the suite integration build on this.
"""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ..checks import NO_JUDGE_HINT as NO_JUDGE_HINT
    from ._answers import AnswerError as AnswerError
    from ._answers import BinaryAnswer as BinaryAnswer
    from ._answers import Checklist as Checklist
    from ._answers import NumberedAnswer as NumberedAnswer
    from ._answers import parse_answer as parse_answer
    from ._answers import schema_of as schema_of
    from ._anthropic import AnthropicJudge as AnthropicJudge
    from ._anthropic_batch import AnthropicBatch as AnthropicBatch
    from ._ask import ask as ask
    from ._batch import Question as Question
    from ._batch import QuestionBatch as QuestionBatch
    from ._batch_api import BatchBackend as BatchBackend
    from ._batch_api import BatchItemFailure as BatchItemFailure
    from ._batch_api import BatchProgress as BatchProgress
    from ._batch_api import BatchState as BatchState
    from ._binary import EVALUATOR as EVALUATOR
    from ._binary import SYSTEM as SYSTEM
    from ._binary import Example as Example
    from ._binary import JudgeCheck as JudgeCheck
    from ._cache import CACHE_ENV as CACHE_ENV
    from ._cache import CachedJudge as CachedJudge
    from ._cache import CacheMode as CacheMode
    from ._cache import JudgeCache as JudgeCache
    from ._cache import ReplayMiss as ReplayMiss
    from ._cache import cache_dir as cache_dir
    from ._cache import cache_key as cache_key
    from ._collect import BATCH_DISCOUNT as BATCH_DISCOUNT
    from ._collect import BUDGET_SPENT as BUDGET_SPENT
    from ._collect import EVALUATION as EVALUATION
    from ._collect import BatchCollector as BatchCollector
    from ._collect import Parked as Parked
    from ._collect import batch_backend_of as batch_backend_of
    from ._collect import custom_id as custom_id
    from ._context import KNOWN_LIMITS as KNOWN_LIMITS
    from ._context import ContextLimitError as ContextLimitError
    from ._context import count_tokens as count_tokens
    from ._context import known_limit as known_limit
    from ._describe import judge_notes as judge_notes
    from ._describe import judge_settings as judge_settings
    from ._exchanges import note_exchange as note_exchange
    from ._exchanges import recorded as recorded
    from ._formatter import DEFAULT_FORMATTER as DEFAULT_FORMATTER
    from ._formatter import TraceFormatter as TraceFormatter
    from ._formatter import block as block
    from ._graded import DEFAULT_METRICS as DEFAULT_METRICS
    from ._graded import LABELS as LABELS
    from ._graded import AddedMetric as AddedMetric
    from ._graded import GradedJudgeCheck as GradedJudgeCheck
    from ._graded import GradedMetric as GradedMetric
    from ._graded import MetricScore as MetricScore
    from ._graded import MetricScores as MetricScores
    from ._graded import configure as configure
    from ._graded import label as label
    from ._graded import overall_score as overall_score
    from ._graded import reweighted as reweighted
    from ._judged import JudgedCheck as JudgedCheck
    from ._judged import Trust as Trust
    from ._judged import judge_failure as judge_failure
    from ._limit_headers import Reading as Reading
    from ._limit_headers import read_limits as read_limits
    from ._metered import BudgetSpent as BudgetSpent
    from ._metered import MeteredJudge as MeteredJudge
    from ._metered import Prices as Prices
    from ._metered import close_judge as close_judge
    from ._metrics import FaithfulnessCheck as FaithfulnessCheck
    from ._metrics import GoalAccuracyCheck as GoalAccuracyCheck
    from ._metrics import Statement as Statement
    from ._metrics import Statements as Statements
    from ._metrics import Workflow as Workflow
    from ._model import JudgeError as JudgeError
    from ._model import JudgeModel as JudgeModel
    from ._model import JudgeReply as JudgeReply
    from ._model import JudgeRequest as JudgeRequest
    from ._model import Message as Message
    from ._openai import OLLAMA_BASE_URL as OLLAMA_BASE_URL
    from ._openai import OpenAIJudge as OpenAIJudge
    from ._openai_batch import OpenAIBatch as OpenAIBatch
    from ._options import DEFAULT_CONCURRENCY as DEFAULT_CONCURRENCY
    from ._options import FORMATS as FORMATS
    from ._options import JUDGE_KEYS as JUDGE_KEYS
    from ._options import JudgeFormat as JudgeFormat
    from ._options import JudgeOptions as JudgeOptions
    from ._outcomes import ExpectedOutcomesCheck as ExpectedOutcomesCheck
    from ._pacing import MAX_WINDOW as MAX_WINDOW
    from ._pacing import START_WINDOW as START_WINDOW
    from ._pacing import Controller as Controller
    from ._pacing import Pacer as Pacer
    from ._pacing import rate_costs as rate_costs
    from ._providers import JudgeProvider as JudgeProvider
    from ._retry import GaveUp as GaveUp
    from ._retry import RetryPolicy as RetryPolicy
    from ._retry import call_with_retries as call_with_retries
    from ._scripted import ScriptedJudge as ScriptedJudge
    from ._scripted import ScriptItem as ScriptItem
    from ._sdk import retry_after as retry_after
    from ._sdk import scrub as scrub
    from ._spec import JUDGE_PROVIDERS as JUDGE_PROVIDERS
    from ._spec import PROVIDERS as PROVIDERS
    from ._spec import make_judge as make_judge
    from ._spec import parse_judge as parse_judge
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
