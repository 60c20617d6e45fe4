"""The executors by name: the built-ins in one table, others from the ``checkweigh.executors``
entry points (see :mod:`checkweigh.plugins`), and the choice a run's options make."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ...errors import InputError
from ...plugins import Registry
from ...suites import Suite

if TYPE_CHECKING:
    from .._options import RunOptions
    from ._base import Executor


class ExecutorKind(Protocol):
    """What a registered name stands for: an executor class (or any object) that says what
    it supports before one is made, and makes one from a run's options."""

    runs_agents: bool
    """Whether its executors run suites whose target is an agent."""
    records_agents: bool
    """Whether the agent's calls can be recorded or replayed with it."""

    def from_options(self, options: RunOptions, /) -> Executor:
        """An executor for one run (``options.workers``, ``options.ray_address``, ...)."""
        ...


def _kind(value: object) -> ExecutorKind:
    if not callable(getattr(value, "from_options", None)):
        raise TypeError("expected an executor class with a from_options(options) classmethod")
    for flag in ("runs_agents", "records_agents"):
        if not isinstance(getattr(value, flag, None), bool):
            raise TypeError(f"expected a bool {flag} attribute (what it supports)")
    return value  # type: ignore[return-value]  # checked above, as far as Python can


EXECUTORS: Registry[ExecutorKind] = Registry(
    "executors",
    {
        "local": "._base:LocalExecutor",
        "processes": "._processes:ProcessExecutor",
        "ray": ".ray:RayExecutor",  # its module imports Ray only when a cluster is joined
    },
    package=__package__ or "checkweigh.runs.executors",
    label="executor",
    accept=_kind,
)
"""Every executor by name (``checkweigh run --executor NAME``)."""


def executor_name(options: RunOptions) -> str:
    """The executor ``options`` ask for: ``--workers N`` (N > 1) alone is the ``processes``
    executor's shorthand.

    Raises:
        InputError: ``--workers`` or ``--ray-address`` with an executor that does not take it.
    """
    name = options.executor
    if options.ray_address is not None and name != "ray":
        raise InputError("a Ray cluster is joined with --executor ray", field="--ray-address")
    if options.workers > 1:
        if name == "local":
            return "processes"
        if name == "ray":
            raise InputError(
                "Ray schedules the work on the cluster's CPUs; drop --workers", field="--workers"
            )
        if name != "processes":
            raise InputError(
                f"--workers sets the processes executor's size, not {name}'s", field="--workers"
            )
    return name


def make_executor(options: RunOptions, suite: Suite, *, given: Executor | None = None) -> Executor:
    """The executor ``options`` ask for (or the one ``given``, instead of a name), checked
    against what it supports (Ray connected here, so an unreachable cluster is refused
    before the run is created).

    Raises:
        InputError: an unknown executor, options it does not take, or a suite or agent
            flags it cannot run, in one line naming the flag.
    """
    kind: ExecutorKind | Executor
    if given is not None:
        if options.executor != "local" or options.workers != 1 or options.ray_address:
            raise InputError(
                "an executor is given both as an object and in the options: give one",
                field="--executor",
            )
        name, kind = given.name, given
    else:
        name = executor_name(options)
        kind = EXECUTORS.get(name, field="--executor")
    # refused before one is made: no worker started, no cluster joined, for nothing
    if not kind.records_agents:
        for path, flag in (
            (options.record_agent, "--record-agent"),
            (options.replay_agent, "--replay-agent"),
        ):
            if path is not None:
                raise InputError(
                    "the agent's calls are recorded or replayed in this process; drop "
                    f"--executor {name}",
                    field=flag,
                )
    if not kind.runs_agents and suite.target is not None:
        raise _no_agents(suite, name)
    return given if given is not None else EXECUTORS.get(name).from_options(options)


def _no_agents(suite: Suite, name: str) -> InputError:
    if name == "processes":
        return InputError(
            f"the suite {suite.name!r} calls an agent: --workers scores recorded cases "
            "(agent calls scale with --concurrency, or across machines with --executor ray)",
            field="--workers",
        )
    return InputError(
        f"the suite {suite.name!r} calls an agent: the {name} executor scores recorded cases only",
        field="--executor",
    )
