"""Check types by name: the one table a suite file's ``type:`` is looked up in.

A :class:`CheckRegistry` maps each ``type`` name to its model class. Everything the loader
needs to know about a type is read from the class itself: its YAML keys are the model's
fields, its name is the default of its ``type`` field, and it needs a judge when its
``evaluate`` takes one (``async evaluate(case, judge)``). There is no global registry: a
suite is loaded with the built-in table plus whatever the caller passes, so one suite's own
types never leak into another's.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Iterable, Iterator
from functools import reduce
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import AliasChoices, BaseModel, Field, TypeAdapter

OVERALL = ""
"""The key of a check's own verdict when it answers several named verdicts: a mapping
``{OVERALL: v, "tone": t}`` from check ``reply`` is recorded as ``reply`` and ``reply.tone``."""

NO_JUDGE_HINT = (
    "no judge configured: pass --judge PROVIDER:MODEL (e.g. --judge ollama:llama3.1, or "
    "--judge openai:gpt-4o-mini with OPENAI_API_KEY set)"
)
"""Why a judge check was skipped, and how to configure a judge."""


def type_name(cls: type[BaseModel]) -> str:
    """The ``type`` a suite file names ``cls`` by: the default of its ``type: Literal[...]``.

    Raises:
        TypeError: ``cls`` is not a model with a one-value ``type`` literal.
    """
    field = cls.model_fields.get("type") if _is_model(cls) else None
    if field is None or get_origin(field.annotation) is not Literal:
        raise TypeError(f"{cls.__qualname__} needs a field `type: Literal['name'] = 'name'`")
    (name, *more) = get_args(field.annotation)
    if more or field.default != name or not isinstance(name, str):
        raise TypeError(f"{cls.__qualname__}.type must be one literal name, defaulting to it")
    return name


def _is_model(cls: object) -> bool:
    return isinstance(cls, type) and issubclass(cls, BaseModel)


def needs_judge(cls: type) -> bool:
    """Whether checks of class ``cls`` ask a judge: their ``evaluate`` takes a ``judge``."""
    evaluate = getattr(cls, "evaluate", None)
    try:
        return evaluate is not None and "judge" in inspect.signature(evaluate).parameters
    except (TypeError, ValueError):  # a builtin or C callable: no judge parameter to see
        return False


def decides_pass(check: object) -> bool:
    """Whether ``check`` decides a case's pass/fail beside its score (``decides_pass = True``
    on its class, as expected outcomes have)."""
    return getattr(check, "decides_pass", False) is True


def yaml_keys(cls: type[BaseModel]) -> set[str]:
    """The keys a suite file may give a check of class ``cls`` (a field's name or alias, and
    the other names its ``validation_alias`` accepts)."""
    keys: set[str] = set()
    for name, f in cls.model_fields.items():
        if f.exclude:
            continue
        keys.add(f.alias or name)
        if isinstance(f.validation_alias, AliasChoices):
            keys.update(c for c in f.validation_alias.choices if isinstance(c, str))
    return keys


def verdict_names(check: object) -> tuple[str, ...]:
    """The named verdicts ``check`` answers besides its own (``check.verdict_names()``)."""
    names = getattr(check, "verdict_names", None)
    return tuple(names()) if callable(names) else ()


class CheckRegistry:
    """Check types by their ``type`` name, in declaration order (error messages list them).

    Build it with :meth:`of`; :meth:`with_types` returns a new registry with more types, so a
    suite's own classes are added for that suite only.
    """

    __slots__ = ("_adapter", "_keys", "_types")

    def __init__(self, types: dict[str, type[BaseModel]]) -> None:
        self._types = dict(types)
        self._keys: frozenset[str] | None = None
        self._adapter: TypeAdapter[Any] | None = None

    @classmethod
    def of(cls, *classes: type[BaseModel]) -> CheckRegistry:
        """A registry of ``classes``, each named by its ``type`` field.

        Raises:
            TypeError: a class has no ``type`` literal.
            ValueError: two classes claim the same name.
        """
        return cls({}).with_types(*classes)

    def with_types(self, *classes: type[BaseModel]) -> CheckRegistry:
        """A new registry with ``classes`` added (the receiver is left unchanged).

        Raises:
            TypeError: a class has no ``type`` literal or no ``evaluate`` method.
            ValueError: a class claims a name already taken by another class.
        """
        types = dict(self._types)
        for model in classes:
            name = type_name(model)
            if not callable(getattr(model, "evaluate", None)):
                raise TypeError(f"{model.__qualname__} has no evaluate method")
            taken = types.get(name)
            if taken is not None and taken is not model:
                raise ValueError(f"check type {name!r} is already {taken.__qualname__}")
            types[name] = model
        return CheckRegistry(types)

    def get(self, name: object) -> type[BaseModel] | None:
        """The class registered as ``name``, or None."""
        return self._types.get(name) if isinstance(name, str) else None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._types

    def __iter__(self) -> Iterator[str]:
        return iter(self._types)

    def __len__(self) -> int:
        return len(self._types)

    def names(self) -> tuple[str, ...]:
        """Every type name, in declaration order."""
        return tuple(self._types)

    def classes(self) -> tuple[type[BaseModel], ...]:
        """Every class, in declaration order."""
        return tuple(self._types.values())

    def allowed_keys(self) -> frozenset[str]:
        """Every YAML key some registered type accepts (for "did you mean" hints)."""
        if self._keys is None:
            self._keys = frozenset(all_keys(self._types.values()))
        return self._keys

    def adapter(self) -> TypeAdapter[Any]:
        """A validator of any registered type, told apart by ``type`` (a discriminated union,
        so a wrong or missing ``type`` is reported as such)."""
        if self._adapter is None:
            models = self.classes()
            if len(models) == 1:
                self._adapter = TypeAdapter(models[0])
            else:
                union = reduce(operator.or_, models)
                tagged: Any = Annotated  # a union built at run time: mypy cannot follow it
                self._adapter = TypeAdapter(tagged[union, Field(discriminator="type")])
        return self._adapter

    def judge_types(self) -> frozenset[str]:
        """The names of the types that ask a judge."""
        return frozenset(n for n, m in self._types.items() if needs_judge(m))

    def needs_judge(self, name: object) -> bool:
        """Whether the type called ``name`` asks a judge (False for an unknown name)."""
        model = self.get(name)
        return model is not None and needs_judge(model)

    def __repr__(self) -> str:
        return f"CheckRegistry({', '.join(self._types)})"


def nested_models(cls: type[BaseModel]) -> list[type[BaseModel]]:
    """``cls`` and every model its fields hold, however deeply (``StepMatch`` in ``before``)."""
    seen: list[type[BaseModel]] = []

    def visit(tp: Any) -> None:
        if _is_model(tp):
            if tp in seen:
                return
            seen.append(tp)
            for f in tp.model_fields.values():
                visit(f.annotation)
        for arg in get_args(tp):
            visit(arg)

    visit(cls)
    return seen


def all_keys(models: Iterable[type[BaseModel]]) -> set[str]:
    """The YAML keys of ``models`` and of the models their fields hold."""
    return {k for model in models for m in nested_models(model) for k in yaml_keys(m)}
