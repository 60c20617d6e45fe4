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
