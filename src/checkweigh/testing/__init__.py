"""Testing aids: a scripted LLM server on 127.0.0.1 that speaks the OpenAI chat-completions
and Anthropic messages wire formats, for exercising real provider SDKs without a network."""

from ._fake_llm import FakeLLM, Reply, fake_llm_server

__all__ = ["FakeLLM", "Reply", "fake_llm_server"]
