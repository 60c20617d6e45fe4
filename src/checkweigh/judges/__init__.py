"""LLM judges: the judge interface, strict yes/no answers, and trace formatting.

Judges are explicit: a judge check is one validated class whose ``async evaluate(case, judge)``
is given the run's judge when it evaluates. Provider clients (OpenAI-compatible, Anthropic,
Ollama), caching and the suite integration build on this.
"""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
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
    from ._providers import JudgeProvider
    from ._retry import GaveUp, RetryPolicy, call_with_retries
    from ._scripted import ScriptedJudge, ScriptItem
    from ._sdk import retry_after, scrub
    from ._spec import JUDGE_PROVIDERS, PROVIDERS, make_judge, parse_judge
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(
        __name__,
        {
            "NO_JUDGE_HINT": "..checks",
            "AnswerError": "._answers",
            "BinaryAnswer": "._answers",
            "Checklist": "._answers",
            "NumberedAnswer": "._answers",
            "parse_answer": "._answers",
            "AnthropicJudge": "._anthropic",
            "ask": "._ask",
            "Question": "._batch",
            "QuestionBatch": "._batch",
            "EVALUATOR": "._binary",
            "SYSTEM": "._binary",
            "Example": "._binary",
            "JudgeCheck": "._binary",
            "CACHE_ENV": "._cache",
            "CachedJudge": "._cache",
            "CacheMode": "._cache",
            "JudgeCache": "._cache",
            "ReplayMiss": "._cache",
            "cache_dir": "._cache",
            "cache_key": "._cache",
            "judge_notes": "._describe",
            "judge_settings": "._describe",
            "note_exchange": "._exchanges",
            "recorded": "._exchanges",
            "DEFAULT_FORMATTER": "._formatter",
            "TraceFormatter": "._formatter",
            "block": "._formatter",
            "DEFAULT_METRICS": "._graded",
            "LABELS": "._graded",
            "AddedMetric": "._graded",
            "GradedJudgeCheck": "._graded",
            "GradedMetric": "._graded",
            "MetricScore": "._graded",
            "MetricScores": "._graded",
            "configure": "._graded",
            "label": "._graded",
            "overall_score": "._graded",
            "reweighted": "._graded",
            "JudgedCheck": "._judged",
            "judge_failure": "._judged",
            "MeteredJudge": "._metered",
            "Prices": "._metered",
            "close_judge": "._metered",
            "FaithfulnessCheck": "._metrics",
            "GoalAccuracyCheck": "._metrics",
            "Statement": "._metrics",
            "Statements": "._metrics",
            "Workflow": "._metrics",
            "JudgeError": "._model",
            "JudgeModel": "._model",
            "JudgeReply": "._model",
            "JudgeRequest": "._model",
            "Message": "._model",
            "OLLAMA_BASE_URL": "._openai",
            "OpenAIJudge": "._openai",
            "DEFAULT_CONCURRENCY": "._options",
            "FORMATS": "._options",
            "JUDGE_KEYS": "._options",
            "JudgeFormat": "._options",
            "JudgeOptions": "._options",
            "ExpectedOutcomesCheck": "._outcomes",
            "GaveUp": "._retry",
            "RetryPolicy": "._retry",
            "call_with_retries": "._retry",
            "ScriptedJudge": "._scripted",
            "ScriptItem": "._scripted",
            "retry_after": "._sdk",
            "scrub": "._sdk",
            "JudgeProvider": "._providers",
            "JUDGE_PROVIDERS": "._spec",
            "PROVIDERS": "._spec",
            "make_judge": "._spec",
            "parse_judge": "._spec",
        },
    )

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
    "JUDGE_PROVIDERS",
    "JudgeProvider",
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
