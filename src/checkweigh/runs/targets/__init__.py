"""Agent targets: how the engine drives an agent (a Python callable, an HTTP endpoint, a
program), one module per kind behind the :class:`Target` protocol."""

from ._base import (
    AgentFailure,
    AgentRun,
    AgentUsage,
    Target,
    TargetRequest,
    history_messages,
    request_payload,
)
from ._build import build_target
from ._python import (
    CallableTarget,
    abandoned_threads,
    agent_error,
    call_in_thread,
    exit_text,
)
from ._timing import timed
from .command import CommandTarget

AgentTarget = CallableTarget
"""The name :class:`CallableTarget` had before other kinds of target existed."""

__all__ = [
    "AgentFailure",
    "AgentRun",
    "AgentTarget",
    "AgentUsage",
    "CallableTarget",
    "CommandTarget",
    "Target",
    "TargetRequest",
    "abandoned_threads",
    "agent_error",
    "build_target",
    "call_in_thread",
    "exit_text",
    "history_messages",
    "request_payload",
    "timed",
]
