"""Testing aids: a scripted LLM server on 127.0.0.1 that speaks the OpenAI chat-completions
and Anthropic messages wire formats, for exercising real provider SDKs without a network; and
evaluations as ordinary tests (the ``checkweigh`` pytest fixture, :func:`assert_case_passes`)."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
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
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(
        __name__,
        {
            "FakeLLM": "._fake_llm",
            "Reply": "._fake_llm",
            "by_schema": "._fake_llm",
            "fake_llm_server": "._fake_llm",
            "schema_name": "._fake_llm",
            "scripted_users": "._fake_user",
            "case_report": "._report",
            "SuiteCache": "._suite_cache",
            "NO_JUDGE_HINT": "._suite_tester",
            "CaseLike": "._suite_tester",
            "CheckweighFixture": "._suite_tester",
            "JudgeLike": "._suite_tester",
            "RunLike": "._suite_tester",
            "SuiteTester": "._suite_tester",
            "assert_case_passes": "._suite_tester",
        },
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
