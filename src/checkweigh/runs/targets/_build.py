"""From a suite's ``target:`` block to the :class:`Target` that drives the agent."""

from __future__ import annotations

from pathlib import Path

from ...suites import TARGETS, TargetSpecBase
from ._base import Target


def build_target(spec: TargetSpecBase, base_dir: Path) -> Target:
    """The target ``spec`` describes, built by its kind (:data:`checkweigh.suites.TARGETS`);
    paths and modules are relative to ``base_dir``. A kind's driver module is imported here,
    so an HTTP client loads only for suites that use it.

    Raises:
        TargetError: the agent cannot be loaded or reached as configured.
        InputError: the kind is not known (a spec built from Python, not by a suite file).
    """
    target: Target = TARGETS.get(spec.kind, field="target.kind").build(spec, base_dir)
    return target
