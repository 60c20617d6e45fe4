"""Extension points: one registry shape for every kind of plugin.

Each kind has one :class:`Registry`: a table of its built-ins, each written as
``name -> "module:attribute"`` and imported only when first used, and an entry-point group
through which another package adds its own, as pytest plugins arrive through ``pytest11``:

=================  ==========================  ============================================
kind               entry-point group           an entry is
=================  ==========================  ============================================
check types        ``checkweigh.checks``       a check model class (its ``type`` literal)
judge providers    ``checkweigh.providers``    a factory ``(model, options, offline)``
target kinds       ``checkweigh.targets``      a target kind (its spec and its driver)
log formats        ``checkweigh.formats``      a log/reply format class
executors          ``checkweigh.executors``    an executor factory
report outputs     ``checkweigh.outputs``      a report writer
=================  ==========================  ============================================

A third-party package declares, in its ``pyproject.toml``::

    [project.entry-points."checkweigh.providers"]
    bedrock = "checkweigh_bedrock:BedrockJudge"

Entry points are read only when a name is not built-in, or when every name is listed (an
error message, ``checkweigh plugins``): start-up and ``--help`` import no plugin. A name a
plugin gives that a built-in already has is refused, never silently shadowed.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar

from .errors import CheckweighError, InputError

T = TypeVar("T")

GROUP_PREFIX = "checkweigh."
"""Every kind's entry-point group is this prefix and the kind: ``checkweigh.providers``."""


class PluginError(CheckweighError):
    """A plugin that cannot be used: its entry point does not load, its object is not of the
    kind, or it claims a built-in's name. The message names the group, the entry point and
    the package that declared it."""


class Registry(Generic[T]):
    """The entries of one kind by name: built-ins first, in table order, then plugins.

    Args:
        kind: the kind's plural name, as in the group (``"providers"``).
        builtins: each built-in name and where it is defined, ``"module:attribute"`` (a
            module relative to ``package`` starts with a dot).
        package: the package relative module paths are resolved in.
        label: how an error names one entry (``"judge provider"``).
        accept: checks (and may convert) a loaded object, raising ``TypeError`` with the
            reason when it is not of the kind.
    """

    __slots__ = (
        "_accept",
        "_builtins",
        "_extra",
        "_label",
        "_loaded",
        "_package",
        "_plugins",
        "_seen_path",
        "kind",
    )

    def __init__(
        self,
        kind: str,
        builtins: Mapping[str, str],
        *,
        package: str,
        label: str,
        accept: Callable[[object], T] | None = None,
    ) -> None:
        self.kind = kind
        self._builtins = dict(builtins)
        self._package = package
        self._label = label
        self._accept = accept
        self._extra: dict[str, T] = {}
        self._loaded: dict[str, T] = {}
        self._plugins: dict[str, EntryPoint] | None = None
        self._seen_path: tuple[str, ...] = ()
        """``sys.path`` when the entry points were read: a changed path reads them again."""

    @property
    def group(self) -> str:
        """The entry-point group other packages add entries through."""
        return GROUP_PREFIX + self.kind

    def builtin_names(self) -> tuple[str, ...]:
        """The built-in names, in table order (reads no entry point)."""
        return tuple(self._builtins)

    def names(self) -> tuple[str, ...]:
        """Every name: the built-ins, the entries added with :meth:`with_entries`, then the
        installed plugins' (reads the entry points)."""
        return (*self._builtins, *self._extra, *self._entry_points())

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return name in self._builtins or name in self._extra or name in self._entry_points()

    def get(
        self,
        name: str,
        *,
        field: str | None = None,
        file: str | None = None,
        line: int | None = None,
    ) -> T:
        """The entry called ``name``, imported on first use.

        Raises:
            InputError: no such name (naming ``field``, ``file`` and ``line`` when given,
                and every known name).
            PluginError: the plugin's entry point does not load or is not of the kind.
        """
        if name not in self._builtins:
            self._entry_points()  # a plugin loaded from a folder since left behind is forgotten
        if name in self._loaded:
            return self._loaded[name]
        if name in self._extra:
            return self._extra[name]
        where = self._builtins.get(name)
        if where is not None:
            value = self._checked(name, _import(where, self._package), where)
        else:
            point = self._entry_points().get(name)
            if point is None:
                raise InputError(
                    f"unknown {self._label} {name!r}; expected one of "
                    f"{', '.join(self.names())} (or a package's entry point in the group "
                    f"{self.group})",
                    field=field,
                    file=file,
                    line=line,
                )
            value = self._checked(name, _load(point, self.group), _describe(point))
        self._loaded[name] = value
        return value

    def origin(self, name: str) -> str:
        """Where the entry ``name`` comes from, for a listing: ``built-in``, ``given`` (added
        with :meth:`with_entries`), or the distribution and entry point of the plugin.

        Raises:
            InputError: no such name.
        """
        if name in self._builtins:
            return "built-in"
        if name in self._extra:
            return "given"
        point = self._entry_points().get(name)
        if point is None:
            raise InputError(f"unknown {self._label} {name!r}")
        dist = point.dist
        package = f"{dist.name} {dist.version}" if dist is not None else "an unknown package"
        return f"{package}: {point.value}"

    def with_entries(self, entries: Mapping[str, T]) -> Registry[T]:
        """A new registry with ``entries`` added, already loaded (the receiver is left
        unchanged): a suite's or a test's own entries, for that caller only.

        Raises:
            PluginError: a name is already taken.
        """
        clash = [n for n in entries if n in self._builtins or n in self._extra]
        if clash:
            raise PluginError(f"{self._label} {', '.join(map(repr, clash))} already exists")
        new = Registry(
            self.kind, self._builtins, package=self._package, label=self._label, accept=self._accept
        )
        new._extra = {**self._extra, **entries}
        new._loaded = dict(self._loaded)
        new._plugins, new._seen_path = self._plugins, self._seen_path
        return new

    def refresh(self) -> None:
        """Forget the entry points read so far (a package was installed meanwhile)."""
        self._plugins = None
        self._loaded = {n: v for n, v in self._loaded.items() if n in self._builtins}

    def _entry_points(self) -> dict[str, EntryPoint]:
        if self._plugins is not None and self._seen_path != tuple(sys.path):
            self.refresh()  # a folder of packages joined (or left) the path meanwhile
        if self._plugins is None:
            self._seen_path = tuple(sys.path)
            found: dict[str, EntryPoint] = {}
            for point in entry_points(group=self.group):
                if point.name in self._builtins:
                    raise PluginError(
                        f"{_describe(point)} claims the name of the built-in {self._label} "
                        f"{point.name!r} (group {self.group}): rename it"
                    )
                found.setdefault(point.name, point)
            self._plugins = found
        return self._plugins

    def _checked(self, name: str, value: object, where: str) -> T:
        if self._accept is None:
            return value  # type: ignore[return-value]  # an untyped table: the caller checks
        try:
            return self._accept(value)
        except TypeError as exc:
            raise PluginError(f"{self._label} {name!r} ({where}) is not usable: {exc}") from None


def _import(where: str, package: str) -> object:
    module, _, attribute = where.partition(":")
    loaded = importlib.import_module(module, package)
    return getattr(loaded, attribute) if attribute else loaded


def _load(point: EntryPoint, group: str) -> object:
    try:
        return point.load()
    except Exception as exc:  # noqa: BLE001 - a broken plugin is named, never a traceback
        raise PluginError(
            f"{_describe(point)} (group {group}) failed to load: {type(exc).__name__}: {exc}"
        ) from None


def _describe(point: EntryPoint) -> str:
    dist = point.dist.name if point.dist is not None else "an unknown package"
    return f"entry point {point.name} = {point.value} of {dist}"
