"""Live scoring: traces received over OTLP become cases, scored by monitors as they arrive
(``checkweigh serve --monitor``), each monitor's results stored per time window as runs."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._webhook import WebhookResult as WebhookResult
    from ._webhook import send_alert as send_alert
    from ._webhook import validate_webhook_url as validate_webhook_url
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
