"""Judges named by a model string, ``PROVIDER:MODEL``: the provider is looked up in
:data:`JUDGE_PROVIDERS` (the built-ins ``openai``, ``anthropic`` and ``ollama``, then the
``checkweigh.providers`` entry points of installed packages) and builds the judge."""

from __future__ import annotations

from ..errors import InputError
from ..plugins import PluginError, Registry
from ._model import JudgeError, JudgeModel
from ._options import JudgeOptions
from ._providers import JudgeProvider


def _provider(value: object) -> JudgeProvider:
    if not callable(value):
        raise TypeError(
            f"expected a factory (model, options, offline) -> judge, got {type(value).__name__}"
        )
    return value  # its signature is checked when it is called


JUDGE_PROVIDERS: Registry[JudgeProvider] = Registry(
    "providers",
    {
        "openai": "._providers:openai",
        "anthropic": "._providers:anthropic",
        "ollama": "._providers:ollama",
    },
    package=__package__ or "checkweigh.judges",
    label="judge provider",
    accept=_provider,
)
"""Every judge provider by name: the one table of the built-ins, and plugins'."""

PROVIDERS = JUDGE_PROVIDERS.builtin_names()
"""The built-in provider names. Deprecated: use :data:`JUDGE_PROVIDERS` (which also knows
the installed plugins'); kept for one release."""


def parse_judge(spec: str) -> tuple[str, str]:
    """``provider:model`` split in two.

    Raises:
        InputError: not of that form, or an unknown provider.
        PluginError: the provider's plugin is broken.
    """
    provider, sep, model = spec.partition(":")
    if not sep or not model or provider not in JUDGE_PROVIDERS:
        raise InputError(
            f"expected PROVIDER:MODEL with PROVIDER one of {', '.join(JUDGE_PROVIDERS.names())}"
            f", got {spec!r}",
            field="--judge",
        )
    return provider, model


def make_judge(
    spec: str,
    *,
    options: JudgeOptions | None = None,
    offline: bool = False,
) -> JudgeModel:
    """The judge a model string names, configured from the environment and ``options``
    (timeouts, retries, deadline, output format; defaults when None).

    ``offline`` (replay from the cache) builds the client without requiring an API key, since
    no call will be made. Nothing here needs a network or a real key: a local server works
    with ``OPENAI_BASE_URL=http://127.0.0.1:PORT/v1`` and any ``OPENAI_API_KEY``.

    Raises:
        InputError: a malformed string, an unknown provider, or a client that cannot be
            built (no API key, SDK not installed).
        PluginError: the provider's plugin is broken, or built something that is not a judge.
    """
    provider, model = parse_judge(spec)
    factory = JUDGE_PROVIDERS.get(provider, field="--judge")
    try:
        judge = factory(model, options or JudgeOptions(), offline)
    except JudgeError as exc:
        raise InputError(str(exc), field="--judge") from None
    except Exception as exc:
        if provider in JUDGE_PROVIDERS.builtin_names():
            raise  # a bug of checkweigh's own: the command reports it as one
        raise PluginError(
            f"judge provider {provider!r} ({JUDGE_PROVIDERS.origin(provider)}) failed to build "
            f"the judge of {model!r}: {type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(judge, JudgeModel):
        raise PluginError(
            f"judge provider {provider!r} built a {type(judge).__name__}, not a judge "
            "(a `name` and an async `complete(request)`)"
        )
    return judge
