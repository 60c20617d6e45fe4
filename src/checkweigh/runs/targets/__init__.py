"""Agent targets: how the engine drives an agent (a Python callable, an HTTP endpoint, a
program), one module per kind behind the :class:`Target` protocol."""

import typing as _typing

from ... import _lazy

if _typing.TYPE_CHECKING:
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
    from ._users import STOP_MARKER, UserTurn
    from .command import CommandTarget
    from .conversation import (
        TRANSFER_TOOLS,
        ConversationFailure,
        ConversationTarget,
        StopReason,
        conversing,
        failed_case,
    )
    from .http import HttpTarget
    from .recording import (
        RecordedCall,
        RecordingTarget,
        ReplayTarget,
        check_record_dir,
        read_manifest,
    )

    AgentTarget = CallableTarget
    """The name :class:`CallableTarget` had before other kinds of target existed."""
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(
        __name__,
        {
            "AgentFailure": "._base",
            "AgentRun": "._base",
            "AgentUsage": "._base",
            "Target": "._base",
            "TargetRequest": "._base",
            "history_messages": "._base",
            "request_payload": "._base",
            "build_target": "._build",
            "CallableTarget": "._python",
            "abandoned_threads": "._python",
            "agent_error": "._python",
            "call_in_thread": "._python",
            "exit_text": "._python",
            "timed": "._timing",
            "STOP_MARKER": "._users",
            "UserTurn": "._users",
            "CommandTarget": ".command",
            "TRANSFER_TOOLS": ".conversation",
            "ConversationFailure": ".conversation",
            "ConversationTarget": ".conversation",
            "StopReason": ".conversation",
            "conversing": ".conversation",
            "failed_case": ".conversation",
            "HttpTarget": ".http",
            "RecordedCall": ".recording",
            "RecordingTarget": ".recording",
            "ReplayTarget": ".recording",
            "check_record_dir": ".recording",
            "read_manifest": ".recording",
            "AgentTarget": "._python:CallableTarget",
        },
    )

__all__ = [
    "AgentFailure",
    "AgentRun",
    "AgentTarget",
    "AgentUsage",
    "CallableTarget",
    "RecordedCall",
    "RecordingTarget",
    "ReplayTarget",
    "ConversationFailure",
    "ConversationTarget",
    "STOP_MARKER",
    "StopReason",
    "TRANSFER_TOOLS",
    "UserTurn",
    "conversing",
    "failed_case",
    "HttpTarget",
    "CommandTarget",
    "Target",
    "TargetRequest",
    "abandoned_threads",
    "agent_error",
    "build_target",
    "call_in_thread",
    "check_record_dir",
    "exit_text",
    "history_messages",
    "read_manifest",
    "request_payload",
    "timed",
]
