"""Which case paths a run's checks read that no case of the run held.

A misspelt ``reference_path`` makes its check not applicable on every case, which reads like
a suite that does not apply rather than a mistake. Every check says which paths of the case it
reads (:func:`probes_of`); the run watches them, and a path no case held is named in the
report. Watching is cheap: a path is tested only until some case holds it, so once every path
was seen (usually on the first cases) a case costs one attribute read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from pydantic import BaseModel

from ..core import MISSING, Case, Condition, FieldPath

Held = Callable[[Case], bool]
"""Whether a case holds what a probe looks for."""
Key = tuple[str, str, str]
"""(check name, field, path): what a probe looks for, and whose it is."""
Watched = tuple[int, tuple[Key, ...]]
"""A chunk's watch, sent between processes: the cases seen, and the keys none of them held."""


class Probe(NamedTuple):
    """A path of the case (or of its calls) a check reads, and how to tell a case holds it."""

    field: str
    """The check's field that names it (``reference_path``, ``when``, ``overrides key``)."""
    path: str
    """The path (or tool name) as written."""
    held: Held
    under: tuple[str, str] | None = None
    """The (field, path) of the probe this one lies within (an override's paths, within its
    tool): not named when that one is, which says it all."""


def path_held(text: str) -> Held:
    """Whether a case reaches a value at ``text`` (null, or no value at all of a path with
    ``[*]`` or a filter, is not one)."""
    path = FieldPath.parse(text)
    get, many = path.getter, path.many

    def held(case: Case) -> bool:
        value = get(case)
        if value is MISSING or value is None:
            return False
        return not (many and not value)

    return held


def model_probes(model: BaseModel, prefix: str = "") -> Iterator[Probe]:
    """The case paths a built-in check's fields name: ``path`` and every ``*_path`` field,
    in nested models too (a step matcher's ``arguments_path`` as ``step.arguments_path``)."""
    for name, value in model:
        label = f"{prefix}{name}"
        if isinstance(value, str) and (name == "path" or name.endswith("_path")):
            yield Probe(label, value, path_held(value))
        elif isinstance(value, BaseModel):
            yield from model_probes(value, f"{label}.")
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, BaseModel):
                    yield from model_probes(item, f"{label}.")


def probes_of(check: object, when: Iterable[Condition] = ()) -> list[Probe]:
    """What a check reads of a case: its own :meth:`case_probes` (the built-ins'), and the
    paths of its ``when`` guards. A user's check says nothing (its fields need not be paths)."""
    probes: list[Probe] = []
    own = getattr(check, "case_probes", None)
    if callable(own) and type(check).__module__.startswith("checkweigh."):
        probes += own()
    for condition in when:
        text = str(condition.path)
        probes.append(Probe("when", text, path_held(text)))
    return probes


class PathWatch:
    """The probes of a run's checks that no case held so far.

    :meth:`see` each case (in this process), :meth:`absorb` the chunks other processes watched
    (:meth:`chunk`); :meth:`unheld` names what no case of either held.
    """

    __slots__ = ("_probes", "_remote", "_remote_seen", "_under", "pending", "seen")

    def __init__(self, probes: dict[Key, Held], under: dict[Key, Key] | None = None) -> None:
        self._probes = probes
        self._under = under or {}
        self.pending: dict[Key, Held] = {}
        """The probes no case seen here held yet: empty (and then nothing to do) once all were."""
        self.seen = 0
        self._remote: set[Key] | None = None
        self._remote_seen = 0
        self.restart()

    @classmethod
    def of(cls, checks: Iterable[tuple[str, object, Iterable[Condition]]]) -> PathWatch:
        """The watch of ``(name, check, when)`` triples."""
        probes: dict[Key, Held] = {}
        under: dict[Key, Key] = {}
        for name, check, when in checks:
            for probe in probes_of(check, when):
                key = (name, probe.field, probe.path)
                probes.setdefault(key, probe.held)
                if probe.under is not None:
                    under[key] = (name, *probe.under)
        return cls(probes, under)

    def restart(self) -> None:
        """Forget every case seen (a worker's next chunk is watched on its own)."""
        self.pending = dict(self._probes)
        self.seen = 0
        self._remote = None
        self._remote_seen = 0

    def see(self, case: Case) -> None:
        """Drop the probes ``case`` holds."""
        self.seen += 1
        held = [key for key, test in self.pending.items() if test(case)]
        for key in held:
            del self.pending[key]

    def chunk(self) -> Watched:
        """What this process saw since :meth:`restart`, for :meth:`absorb` in the driver."""
        return self.seen, tuple(self.pending)

    def absorb(self, watched: Watched | None) -> None:
        """Account for a chunk watched elsewhere: what it held is held."""
        if watched is None or not watched[0]:
            return
        seen, unheld = watched
        self._remote_seen += seen
        self._remote = set(unheld) if self._remote is None else self._remote & set(unheld)

    def unheld(self) -> list[Key]:
        """The probes no case of the run held, in the checks' order (none when no case was
        seen: then nothing can be said)."""
        if not self.seen and not self._remote_seen:
            return []
        remote = self._remote
        unheld = [k for k in self._probes if k in self.pending and (remote is None or k in remote)]
        named = set(unheld)
        return [k for k in unheld if self._under.get(k) not in named]


def unheld_note(key: Key) -> str:
    """The report's note on a probe no case held."""
    check, field, path = key
    return f"check {check}: {field} {path} matched nothing in any case of the run (misspelt?)"


def reaches(value: Any, parts: tuple[Any, ...]) -> bool:
    """Whether the argument path ``parts`` (see ``_argpaths.parse_arg_path``) reaches a value
    in ``value``; ``"*"`` stands for any item of a list."""
    if not parts:
        return True
    head, rest = parts[0], parts[1:]
    if isinstance(head, str) and head != "*":
        return isinstance(value, dict) and head in value and reaches(value[head], rest)
    if not isinstance(value, list):
        return False
    if head == "*":
        return any(reaches(item, rest) for item in value)
    return -len(value) <= head < len(value) and reaches(value[head], rest)
