"""Testing aids: a scripted LLM server on 127.0.0.1 that speaks the OpenAI chat-completions
and Anthropic messages wire formats, for exercising real provider SDKs without a network; and
evaluations as ordinary tests (the ``checkweigh`` pytest fixture, :func:`assert_case_passes`)."""

from ._fake_llm import FakeLLM, Reply, by_schema, fake_llm_server, schema_name
from ._fake_user import scripted_users
from ._report import case_report
from ._suite_cache import SuiteCache
from ._suite_tester import (
    NO_JUDGE_HINT,
    CaseLike,
    CheckweighFixture,
    JudgeLike,
    RunLike,
    SuiteTester,
    assert_case_passes,
)

__all__ = [
    "FakeLLM",
    "Reply",
    "by_schema",
    "fake_llm_server",
    "schema_name",
    "scripted_users",
    "NO_JUDGE_HINT",
    "CaseLike",
    "CheckweighFixture",
    "JudgeLike",
    "RunLike",
    "SuiteCache",
    "SuiteTester",
    "assert_case_passes",
    "case_report",
]
