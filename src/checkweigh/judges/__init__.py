"""LLM judges: the judge interface, strict yes/no answers, and trace formatting.

Judges are explicit: a judge check is one validated class whose ``async evaluate(case, judge)``
is given the run's judge when it evaluates. Provider clients (OpenAI-compatible, Anthropic,
Ollama), caching and the suite integration build on this.
"""

from ..checks import NO_JUDGE_HINT
from ._answers import AnswerError, BinaryAnswer, Checklist, NumberedAnswer, parse_answer
from ._anthropic import AnthropicJudge
from ._ask import ask
from ._batch import Question, QuestionBatch
from ._binary import EVALUATOR, SYSTEM, Example, JudgeCheck
from ._cache import (
    CACHE_ENV,
    CachedJudge,
    CacheMode,
    JudgeCache,
    ReplayMiss,
    cache_dir,
    cache_key,
)
from ._describe import judge_notes, judge_settings
from ._exchanges import note_exchange, recorded
from ._formatter import DEFAULT_FORMATTER, TraceFormatter, block
from ._graded import (
    DEFAULT_METRICS,
    LABELS,
    AddedMetric,
    GradedJudgeCheck,
    GradedMetric,
    MetricScore,
    MetricScores,
    configure,
    label,
    overall_score,
    reweighted,
)
from ._judged import JudgedCheck, judge_failure
from ._metered import MeteredJudge, Prices, close_judge
from ._metrics import (
    FaithfulnessCheck,
    GoalAccuracyCheck,
    Statement,
    Statements,
    Workflow,
)
from ._model import JudgeError, JudgeModel, JudgeReply, JudgeRequest, Message
from ._openai import OLLAMA_BASE_URL, OpenAIJudge
from ._options import DEFAULT_CONCURRENCY, FORMATS, JUDGE_KEYS, JudgeFormat, JudgeOptions
from ._outcomes import ExpectedOutcomesCheck
from ._retry import GaveUp, RetryPolicy, call_with_retries
from ._scripted import ScriptedJudge, ScriptItem
from ._sdk import retry_after, scrub
from ._spec import PROVIDERS, make_judge, parse_judge

__all__ = [
    "note_exchange",
    "recorded",
    "AddedMetric",
    "EVALUATOR",
    "JudgedCheck",
    "Question",
    "QuestionBatch",
    "ask",
    "judge_failure",
    "reweighted",
    "DEFAULT_METRICS",
    "LABELS",
    "GradedJudgeCheck",
    "GradedMetric",
    "MetricScore",
    "MetricScores",
    "configure",
    "label",
    "overall_score",
    "Checklist",
    "FaithfulnessCheck",
    "GoalAccuracyCheck",
    "Statement",
    "NumberedAnswer",
    "Statements",
    "Workflow",
    "ExpectedOutcomesCheck",
    "AnthropicJudge",
    "DEFAULT_CONCURRENCY",
    "FORMATS",
    "JUDGE_KEYS",
    "GaveUp",
    "JudgeFormat",
    "JudgeOptions",
    "judge_notes",
    "judge_settings",
    "retry_after",
    "scrub",
    "MeteredJudge",
    "Prices",
    "NO_JUDGE_HINT",
    "PROVIDERS",
    "make_judge",
    "parse_judge",
    "CACHE_ENV",
    "CacheMode",
    "CachedJudge",
    "JudgeCache",
    "ReplayMiss",
    "cache_dir",
    "cache_key",
    "DEFAULT_FORMATTER",
    "OLLAMA_BASE_URL",
    "SYSTEM",
    "AnswerError",
    "BinaryAnswer",
    "Example",
    "JudgeCheck",
    "JudgeError",
    "JudgeModel",
    "JudgeReply",
    "JudgeRequest",
    "Message",
    "OpenAIJudge",
    "RetryPolicy",
    "ScriptItem",
    "ScriptedJudge",
    "TraceFormatter",
    "block",
    "call_with_retries",
    "close_judge",
    "parse_answer",
]
