"""The parts of an ``http`` target's spec: its URL, headers, body template and reply reading.

Values may name environment variables as ``${NAME}``: the suite (and so every stored run's
snapshot) keeps the name, and the value is read when a run starts
(:mod:`checkweigh.runs.targets.http`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from ..core import FieldPath
from ..errors import CheckweighError
from ..importers import FORMATS, FieldMapping

ENV_REF = re.compile(r"\$\{([^}]*)\}")
"""``${NAME}`` in a URL or a header value."""
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
BODY_REF = re.compile(r"\{\{\s*(.*?)\s*\}\}")
"""``{{path}}`` in a body template."""
BODY_ROOTS = ("id", "input", "metadata", "repeat", "messages", "turn")
"""What a body template may read: the default request's keys."""
_USERINFO = re.compile(r"//[^/@]*@")
_SECRET_HEADER = re.compile(r"authorization|cookie|token|secret|api[-_]?key|password", re.I)

OWN_REPLY_FORMATS = ("checkweigh", "text")
"""The reply formats that are not log formats: checkweigh's own and plain text."""
_MAPPING_FIELDS = frozenset(("messages", "messages_format", "system", "trace", "final_state"))


def env_names(text: str) -> list[str]:
    """The environment variables ``text`` names (``${NAME}``), in order.

    Raises:
        ValueError: a ``${...}`` whose inside is not a variable name.
    """
    names = []
    for found in ENV_REF.finditer(text):
        name = found.group(1)
        if not _ENV_NAME.match(name):
            raise ValueError(f"expected ${{NAME}} with a variable name, got {found.group()!r}")
        names.append(name)
    if "${" in ENV_REF.sub("", text):
        raise ValueError(f"unclosed '${{' in {text!r}; expected ${{NAME}}")
    return names


def url_problem(url: str) -> str | None:
    """What is wrong with ``url`` as an agent's endpoint, or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return f"expected an http:// or https:// URL, got {url!r}"
    if not parts.hostname:
        return f"expected a host in the URL, got {url!r}"
    return None


def env_url_problem(template: str, environ: Mapping[str, str]) -> str | None:
    """What is wrong with the URL ``template`` makes once its ``${NAME}``s are read from
    ``environ``, naming them (a query or a password the value holds is not shown); None when
    it is fine, or a variable is unset (that is said when the run starts)."""
    names = env_names(template)
    if not names or not all(environ.get(name) for name in names):
        return None
    url = ENV_REF.sub(lambda m: environ[m.group(1)], template)
    problem = url_problem(url)
    if problem is None:
        return None
    hidden = _USERINFO.sub("//***@", url.split("?", 1)[0].split("#", 1)[0])
    problem = problem.replace(repr(url), repr(hidden))
    given = ", ".join(f"${{{name}}}" for name in dict.fromkeys(names))
    return f"{given} from the environment gives {hidden!r}: {problem}"


def check_url(value: str) -> str:
    """A suite's ``url``: checked now unless part of it comes from the environment."""
    if env_names(value):
        return value  # checked once the environment filled it in
    problem = url_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def check_headers(value: dict[str, str]) -> dict[str, str]:
    """Header names and values; a secret written into the suite is refused (it would be
    stored with every run)."""
    for name, text in value.items():
        if not name or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):
            raise ValueError(f"{name!r} is not a header name")
        if "\n" in text or "\r" in text:
            raise ValueError(f"header {name}: a value is one line")
        if not env_names(text) and _SECRET_HEADER.search(name):
            raise ValueError(
                f"header {name}: a secret written in the suite is stored with every run; "
                f"give it from the environment, e.g. 'Bearer ${{AGENT_TOKEN}}'"
            )
    return value


def check_body(value: Any) -> Any:
    """A body template: every ``{{path}}`` reads the default request (``id``, ``input``,
    ``metadata``, ``repeat``, ``messages``, ``turn``)."""
    for text in _strings(value):
        for found in BODY_REF.finditer(text):
            path = FieldPath.parse(found.group(1))  # PathSyntaxError is a ValueError
            if path.parts[0] not in BODY_ROOTS:
                raise ValueError(
                    f"{found.group()!r} reads {path.parts[0]!r}; expected a path under "
                    f"{', '.join(BODY_ROOTS)}"
                )
    return value


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


class ReplySpec(BaseModel):
    """How an out-of-process agent's reply (an HTTP body, a program's stdout) is read: one
    conversation (for a conversation turn: the turn's new steps) and the agent's final state."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: str = "checkweigh"
    """``checkweigh``: ``{trace, final_state, usage}`` in checkweigh's own step format;
    ``text``: the agent's answer as text (the whole reply, or the string at ``text`` in a
    JSON reply), one assistant message; or any log format that reads replies
    (:data:`~checkweigh.importers.FORMATS`): ``openai``, ``openai-responses``, ``anthropic``
    (one conversation as the importer reads it, with ``final_state`` beside the messages),
    ``otel`` (an OTLP/JSON export request holding one trace), ``mapping`` (where the parts
    are, in ``mapping``), or a plugin's."""
    text: str | None = None
    """For ``format: text``: the field path of the answer in a JSON reply (e.g. ``response``)."""
    mapping: FieldMapping | None = None
    """For ``format: mapping``: field paths into the reply (``messages``,
    ``messages_format``, ``system``, ``trace``, ``final_state``)."""

    @field_validator("format")
    @classmethod
    def _reply_format(cls, value: str) -> str:
        if value in OWN_REPLY_FORMATS:
            return value
        try:
            made = FORMATS.get(value)
        except CheckweighError as exc:  # unknown, or a plugin's that does not load
            if value in FORMATS:
                raise ValueError(str(exc)) from None
            expected = ", ".join((*OWN_REPLY_FORMATS, *FORMATS.names()))
            raise ValueError(
                f"unknown reply format {value!r}; expected one of {expected}"
            ) from None
        if not _reads_replies(made):
            raise ValueError(f"log format {value!r} does not read an agent's reply")
        return value

    @model_validator(mode="after")
    def _mapping_for_mapping(self) -> ReplySpec:
        if self.format == "mapping" and self.mapping is None:
            raise ValueError("format: mapping needs 'mapping' (messages or trace, final_state)")
        if self.format != "mapping" and self.mapping is not None:
            raise ValueError("'mapping' applies to format: mapping")
        if self.text is not None:
            if self.format != "text":
                raise ValueError("'text' applies to format: text")
            FieldPath.parse(self.text)  # a PathSyntaxError (a ValueError) names what is wrong
        if self.mapping is not None:
            extra = sorted(self.mapping.model_fields_set - _MAPPING_FIELDS)
            if extra:
                raise ValueError(
                    f"mapping.{extra[0]} does not apply to a reply; expected "
                    f"{', '.join(sorted(_MAPPING_FIELDS))}"
                )
        return self


def _reads_replies(fmt: object) -> bool:
    return callable(getattr(fmt, "read_reply", None))
