"""Live scoring: traces received over OTLP become cases, scored by monitors as they arrive
(``checkweigh serve --monitor``), each monitor's results stored per time window as runs."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._monitor import Monitor as Monitor
    from ._monitor import load_monitor as load_monitor
    from ._monitor import trace_matches as trace_matches
    from ._spec import MonitorError as MonitorError
    from ._spec import MonitorSpec as MonitorSpec
    from ._spec import parse_duration as parse_duration
    from ._webhook import WebhookResult as WebhookResult
    from ._webhook import send_alert as send_alert
    from ._webhook import validate_webhook_url as validate_webhook_url
    from ._windows import OpenSummaries as OpenSummaries
    from ._windows import check_counts as check_counts
    from ._windows import close_windows as close_windows
    from ._windows import window_summary as window_summary
    from ._worker import LiveScorer as LiveScorer
    from ._worker import LiveSettings as LiveSettings
    from ._worker import ScorerStats as ScorerStats
    from ._worker import ScorerThread as ScorerThread
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
