"""Testing aids: a scripted LLM server on 127.0.0.1 that speaks the OpenAI chat-completions
and Anthropic messages wire formats (and both providers' batch APIs), for exercising real
provider SDKs without a network; an OTLP/HTTP capture server that keeps what an instrumented
program exports (:func:`otlp_capture_server`); and
evaluations as ordinary tests (the ``checkweigh`` pytest fixture, :func:`assert_case_passes`)."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._fake_agent import agent_turn as agent_turn
    from ._fake_agent import scripted_agents as scripted_agents
    from ._fake_batches import BatchScript as BatchScript
    from ._fake_batches import FakeBatches as FakeBatches
    from ._fake_cache import FakePromptCache as FakePromptCache
    from ._fake_limits import FakeLimits as FakeLimits
    from ._fake_llm import FakeLLM as FakeLLM
    from ._fake_llm import Reply as Reply
    from ._fake_llm import ToolCall as ToolCall
    from ._fake_llm import by_schema as by_schema
    from ._fake_llm import fake_llm_server as fake_llm_server
    from ._fake_llm import schema_name as schema_name
    from ._fake_user import scripted_users as scripted_users
    from ._otlp_capture import Export as Export
    from ._otlp_capture import OtlpCapture as OtlpCapture
    from ._otlp_capture import otlp_capture_server as otlp_capture_server
    from ._report import case_report as case_report
    from ._suite_cache import SuiteCache as SuiteCache
    from ._suite_tester import NO_JUDGE_HINT as NO_JUDGE_HINT
    from ._suite_tester import CaseLike as CaseLike
    from ._suite_tester import CheckweighFixture as CheckweighFixture
    from ._suite_tester import JudgeLike as JudgeLike
    from ._suite_tester import RunLike as RunLike
    from ._suite_tester import SuiteTester as SuiteTester
    from ._suite_tester import assert_case_passes as assert_case_passes
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
