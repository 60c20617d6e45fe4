"""``checkweigh plugins``: every extension by kind, and where each comes from (built-in, or
the package and entry point that adds it). A broken plugin is listed with its one-line error;
the command exits 0 unless ``--strict``. Nothing is imported until the command runs."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from ..reports import plain
from ._common import EXIT_INPUT, app, consoles

KINDS: dict[str, tuple[str, str]] = {
    "checks": ("checkweigh.suites", "CHECK_TYPES"),
    "providers": ("checkweigh.judges", "JUDGE_PROVIDERS"),
    "targets": ("checkweigh.suites", "TARGETS"),
    "formats": ("checkweigh.importers", "FORMATS"),
    "executors": ("checkweigh.runs.executors", "EXECUTORS"),
    "outputs": ("checkweigh.service", "OUTPUTS"),
}
"""Each kind (its entry-point group is ``checkweigh.<kind>``) and where its registry is."""


@dataclass(frozen=True)
class Listed:
    """One entry of one kind, as listed."""

    name: str
    origin: str
    error: str | None = None


def _registry(kind: str) -> Any:
    module, attribute = KINDS[kind]
    return getattr(importlib.import_module(module), attribute)


def _verify(kind: str) -> Callable[[Any, str], object]:
    """How an entry of ``kind`` is loaded and checked, as a run would use it."""
    if kind == "checks":
        from ..checks import type_name
        from ..plugins import PluginError

        def check(registry: Any, name: str) -> object:
            model = registry.get(name)
            if (declared := type_name(model)) != name:
                raise PluginError(f"its class's type is {declared!r}, not {name!r}")
            return model

        return check
    if kind == "outputs":
        from ..service import get_output

        return lambda _registry, name: get_output(name)
    return lambda registry, name: registry.get(name)


def list_kind(kind: str) -> tuple[str, list[Listed], str | None]:
    """The group of ``kind``, its entries, and the error that kept the group from being read
    (a plugin claiming a built-in's name), if any."""
    from ..errors import CheckweighError

    registry = _registry(kind)
    try:
        names = registry.names()
    except CheckweighError as exc:
        return registry.group, [Listed(n, "built-in") for n in registry.builtin_names()], str(exc)
    verify = _verify(kind)
    listed: list[Listed] = []
    for name in names:
        origin = registry.origin(name)
        try:
            verify(registry, name)
        except CheckweighError as exc:
            listed.append(Listed(name, origin, str(exc)))
        else:
            listed.append(Listed(name, origin))
    return registry.group, listed, None


@app.command("plugins")
def plugins_command(
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 2 when a plugin is broken.")
    ] = False,
) -> None:
    """List the check types, judge providers, target kinds, log formats, executors and report
    outputs, built-in and from installed packages, and which plugins are broken."""
    out, err = consoles()
    broken = 0
    for kind in KINDS:
        group, listed, problem = list_kind(kind)
        out.print(plain(f"{kind} ({group})"))
        if problem is not None:
            broken += 1
            out.print(plain(f"  error: {problem}"), soft_wrap=True)
        if not listed:
            out.print(plain("  (none)"))
        width = max((len(e.name) for e in listed), default=0)
        for entry in listed:
            line = f"  {entry.name:<{width}}  {entry.origin}"
            if entry.error is not None:
                broken += 1
                line += f"  error: {entry.error}"
            out.print(plain(line), soft_wrap=True)
    if broken:
        err.print(plain(f"{broken} broken plugin(s)"), soft_wrap=True)
        if strict:
            raise typer.Exit(EXIT_INPUT)
