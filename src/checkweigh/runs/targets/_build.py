"""From a suite's ``target:`` block to the :class:`Target` that drives the agent."""

from __future__ import annotations

from pathlib import Path

from ...suites import TargetSpec
from ._base import Target


def build_target(spec: TargetSpec, base_dir: Path) -> Target:
    """The target ``spec`` describes; paths and modules are relative to ``base_dir``.

    Raises:
        TargetError: the agent cannot be loaded or reached as configured.
    """
    if spec.kind == "python":
        from ._python import CallableTarget

        return CallableTarget.load(spec.agent, base_dir)
    if spec.kind == "http":
        from .http import HttpTarget  # httpx loads only for suites that use it

        return HttpTarget(spec)
    if spec.kind == "command":
        from .command import CommandTarget

        return CommandTarget.load(spec, base_dir)
    raise AssertionError(f"unhandled target kind {spec.kind!r}")  # the schema allows no other
