"""Reading a suite file into a :class:`Suite`, with one-line errors for every mistake."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..checks import (
    BuiltinCheck,
    CheckRegistry,
    ImportTargetError,
    NamedCheck,
    PythonCheck,
    all_keys,
    decides_pass,
    load_object,
    resolve_python_check,
    verdict_names,
    yaml_keys,
)
from ..core import (
    DEFAULT_GATES,
    Condition,
    GateMetric,
    PassMode,
    PassPolicy,
    Rubric,
    RubricError,
    RubricItem,
)
from ..errors import CheckweighError, InputError, SuiteError
from ..plugins import PluginError
from ._check_types import BUILTIN_CHECKS, plugin_check, plugin_check_names
from ._errors import clean_loc, describe, loc_text, pick, suggest
from ._schema import (
    BandsSpec,
    CasesSpec,
    ConditionSpec,
    GateSpec,
    OutcomeDefaults,
    OutcomeRuleSpec,
    RubricSpec,
    SuiteSpec,
    WeightSpec,
    build_conditions,
)
from ._source import CasesSource
from ._suite import Suite
from ._targets import TARGETS, TargetSpecBase
from ._text import inert, shown
from ._yaml import LineMap, Loc, read_yaml_file

SUITE_FILE_LIMIT = 16 * 2**20
"""Suites are small; a bigger file (or ``/dev/zero``) is refused before it is read."""
_COND_ADAPTER: TypeAdapter[Any] = TypeAdapter(ConditionSpec | list[ConditionSpec])
_CHECK_EXTRAS = ("when", "description")
_SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    SuiteSpec,
    RubricSpec,
    WeightSpec,
    OutcomeDefaults,
    OutcomeRuleSpec,
    BandsSpec,
    GateSpec,
    ConditionSpec,
)


def _unwrap(tp: Any) -> Any:
    """The model, dict or list inside Optional / Annotated / union annotations."""
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
        elif origin in (Union, UnionType):
            args = [a for a in get_args(tp) if a is not type(None)]
            models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
            tp = models[0] if models else args[0]
        else:
            return tp


def _keys_at(root: type[BaseModel], loc: Loc) -> set[str] | None:
    """The keys allowed next to ``loc[-1]``, walking ``root``'s annotations; None if unknown."""
    tp: Any = root
    for part in loc[:-1]:
        tp = _unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            field = tp.model_fields.get(str(part))
            if field is None:
                return None
            tp = field.annotation
        elif get_origin(tp) in (dict, list):
            tp = get_args(tp)[-1]
        else:
            return None
    models = _union_models(tp) or [_unwrap(tp)]
    keys = {
        f.alias or name
        for model in models
        if isinstance(model, type) and issubclass(model, BaseModel)
        for name, f in model.model_fields.items()
    }
    return keys or None


def _union_models(tp: Any) -> list[type[BaseModel]]:
    """Every model of a union (a target's kinds), for hints over the keys of any of them."""
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    if get_origin(tp) not in (Union, UnionType):
        return []
    found: list[type[BaseModel]] = []
    for arg in get_args(tp):
        found += _union_models(arg) or [
            m for m in [_unwrap(arg)] if isinstance(m, type) and issubclass(m, BaseModel)
        ]
    return found


def _known_keys(types: CheckRegistry) -> set[str]:
    """Every key a suite file may use somewhere, for "did you mean" hints."""
    return all_keys(_SCHEMA_MODELS) | types.allowed_keys() | {"in", *_CHECK_EXTRAS}


class _Ctx:
    """Where errors point (the file and its line map), and the check types it may use."""

    def __init__(self, path: Path, lines: LineMap, types: CheckRegistry = BUILTIN_CHECKS) -> None:
        self.path = path
        self.lines = lines
        self.types = types
        self.checks: dict[str, NamedCheck] = {}
        self._keys: set[str] | None = None

    def reset_keys(self) -> None:
        """Forget the known keys: a type was added."""
        self._keys = None

    def error(self, loc: Loc, message: str, at: Loc | None = None) -> SuiteError:
        """The error about field ``loc``, on the line of ``at`` (default: the field's)."""
        return SuiteError(
            inert(message),
            file=self.path,
            line=self.lines.line(loc if at is None else at),
            field=loc_text(loc) or None,
        )

    def from_validation(
        self,
        exc: ValidationError,
        data: Any,
        prefix: Loc = (),
        tag: object = None,
        model: type[BaseModel] = SuiteSpec,
    ) -> SuiteError:
        """The error of validating ``data`` (found at ``prefix`` in the file) against ``model``;
        ``tag`` is the discriminator value pydantic puts first in each location."""
        if self._keys is None:
            self._keys = _known_keys(self.types)
        err = pick(exc)
        if tag is not None and tuple(err["loc"])[:1] == (tag,):
            err["loc"] = tuple(err["loc"])[1:]
        keys = _keys_at(model, clean_loc(tuple(err["loc"]), data))
        found = describe(err, keys if keys is not None else self._keys, data)
        return self.error(prefix + found.loc, found.message, prefix + found.at)


def load_suite(
    path: str | Path,
    *,
    extra_types: Iterable[type[BaseModel]] = (),
    load_agent: bool = True,
    own_cases: bool = True,
) -> Suite:
    """Load, validate and resolve a suite file.

    A check's ``type`` names a built-in (:data:`BUILTIN_CHECKS`), one of ``extra_types``
    (models with a ``type`` literal and an ``evaluate`` method, for this suite only), or a
    class by dotted path (``mypkg.checks.NoRefundOverLimit``, imported relative to the
    suite's folder), whose fields are validated from the check's other keys.

    ``load_agent=False`` leaves a Python target's agent unimported (a run replaying a
    recording of it calls no agent). ``own_cases=False``: the caller reads other cases
    (``run --cases``, then :meth:`Suite.with_cases`), so the suite's own file need not exist.

    Raises:
        SuiteError: one line naming the file, line, field and what was expected.
        TypeError, ValueError: a class in ``extra_types`` has no ``type`` literal or takes a
            name already used.
    """
    path = Path(path)
    types = BUILTIN_CHECKS.with_types(*extra_types) if extra_types else BUILTIN_CHECKS
    data, lines = read_yaml_file(
        path,
        limit=SUITE_FILE_LIMIT,
        what="suite file (YAML)",
        error=SuiteError,
        missing="suite file not found",
        unreadable="cannot read suite file",
    )
    ctx = _Ctx(path, lines, types)
    if not isinstance(data, dict):
        raise ctx.error((), "expected a mapping with name, cases, checks and rubrics")
    # top-level 'x-' keys are the user's own (a home for YAML anchors merged with '<<:')
    data = {k: v for k, v in data.items() if not (isinstance(k, str) and k.startswith("x-"))}
    if "pass_policy" in data:  # where the one-liner may lead a user to write it
        raise ctx.error(
            ("pass_policy",),
            "unknown key 'pass_policy' at the top level; it belongs under 'thresholds:' "
            "(thresholds: {pass_policy: all_checks})",
        )
    base = path.parent.resolve()
    if isinstance(data.get("target"), dict):  # validated by its kind, pointing at its line
        data = {**data, "target": _target(ctx, data["target"], base, load_agent=load_agent)}
    try:
        spec = SuiteSpec.model_validate(data)
    except ValidationError as exc:
        raise ctx.from_validation(exc, data) from None
    checks = {name: _build_check(ctx, name, raw, base) for name, raw in spec.checks.items()}
    ctx.checks = checks
    rubrics = tuple(_build_rubric(ctx, name, r, checks) for name, r in spec.rubrics.items())
    gates = _build_gates(ctx, spec, rubrics)
    policy = _build_policy(ctx, spec, rubrics)
    cases = _cases_source(ctx, base, spec.cases, given=data["cases"], must_exist=own_cases)
    return Suite(spec.name, path, spec, checks, rubrics, gates, cases, policy)


def _target(ctx: _Ctx, raw: dict[Any, Any], base: Path, *, load_agent: bool) -> TargetSpecBase:
    """The ``target:`` block validated by its kind's spec, then checked by the kind (a
    program, a module or a URL that is not there is said now, not when the run starts)."""
    name = raw.get("kind", "python")
    if not isinstance(name, str):
        raise ctx.error(("target", "kind"), f"expected a target kind's name, got {shown(name)}")
    try:
        kind = TARGETS.get(name)
    except CheckweighError as exc:  # unknown (naming the known ones), or a broken plugin
        message = exc.message if isinstance(exc, InputError) else str(exc)
        raise ctx.error(("target", "kind"), message) from None
    try:
        spec = kind.spec.model_validate({**raw, "kind": name})
    except ValidationError as exc:
        raise ctx.from_validation(exc, raw, ("target",), model=kind.spec) from None
    try:
        kind.check(spec, base, load_agent=load_agent)
    except InputError as exc:
        loc = ("target", *exc.field.split(".")) if exc.field else ("target",)
        raise ctx.error(loc, exc.message) from None
    except Exception as exc:  # noqa: BLE001 - a plugin's check failed: one line, no trace
        raise ctx.error(("target",), f"{name} target: {type(exc).__name__}: {exc}") from None
    return spec


def _cases_source(
    ctx: _Ctx, base: Path, spec: CasesSpec, given: Any, *, must_exist: bool = True
) -> CasesSource:
    """The suite's cases (``given`` as the file has it): the file must exist, unless
    ``must_exist`` is false (other cases are read in its place)."""
    loc: Loc = ("cases", "path") if isinstance(given, dict) else ("cases",)
    what = "log file" if spec.format else "cases file"
    try:
        path = (base / spec.path).resolve()
        if must_exist and path.is_dir():
            raise ctx.error(loc, f"{path} is a folder; expected a {what}")
        if must_exist and not path.is_file():
            found = "not a regular file" if path.exists() else f"{what} not found"
            raise ctx.error(loc, f"{found}: {path}")
    except (OSError, ValueError) as exc:  # a NUL byte, a name too long for the system
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ctx.error(loc, f"unusable path {shown(spec.path)}: {reason}") from None
    source = CasesSource(path, spec.format, spec.on_bad_record, spec.mapping, spec.options)
    if source.imported:
        try:
            source.reader()  # the format's options, checked before anything runs
        except InputError as exc:
            raise ctx.error(("cases", "options"), exc.message) from None
    return source


def _build_check(ctx: _Ctx, name: str, raw: dict[str, Any], base: Path) -> NamedCheck:
    loc: Loc = ("checks", name)
    body = {k: v for k, v in raw.items() if k not in _CHECK_EXTRAS}
    kind = body.get("type")
    if isinstance(kind, str) and kind not in ctx.types and not _is_dotted(kind):
        _add_plugin_type(ctx, loc, kind)
    if kind not in ctx.types and _is_dotted(kind):
        check: Any = _user_check(ctx, loc, str(kind), body, base)
    else:
        _refuse_keys(ctx, loc, body, yaml_keys(model) if (model := ctx.types.get(kind)) else None)
        try:
            check = ctx.types.adapter().validate_python(body)
        except ValidationError as exc:
            # the discriminated union puts the check's type first in each location: drop it
            model = ctx.types.get(kind) or BuiltinCheck
            raise ctx.from_validation(exc, body, loc, tag=kind, model=model) from None
    _check_verdict_names(ctx, loc, check)
    when: tuple[Condition, ...] = ()
    if "when" in raw:
        try:
            when = build_conditions(_COND_ADAPTER.validate_python(raw["when"]))
        except ValidationError as exc:
            where = (*loc, "when")
            raise ctx.from_validation(exc, raw["when"], where, model=ConditionSpec) from None
    if isinstance(check, PythonCheck):
        try:
            return NamedCheck.of(name, resolve_python_check(check, [base]), when)
        except ImportTargetError as exc:
            raise ctx.error((*loc, "function"), str(exc)) from None
    return NamedCheck.of(name, check, when)


def _add_plugin_type(ctx: _Ctx, loc: Loc, kind: str) -> None:
    """Add the installed plugin's check type ``kind`` to the types ``ctx`` may use, or fail
    with one line listing every known type when no plugin gives it."""
    try:
        model = plugin_check(kind)
        if model is None:
            known = (*ctx.types.names(), *plugin_check_names())
            raise ctx.error(
                (*loc, "type"),
                f"unknown check type {kind!r}; expected one of {', '.join(repr(n) for n in known)}",
            )
    except PluginError as exc:
        raise ctx.error((*loc, "type"), str(exc)) from None
    ctx.types = ctx.types.with_types(model)
    ctx.reset_keys()


def _refuse_keys(ctx: _Ctx, loc: Loc, body: dict[str, Any], allowed: set[str] | None) -> None:
    """One line for the first key of ``body`` that is not ``allowed`` (a field set from Python
    only, such as a judge check's ``formatter``, is not a suite key)."""
    if allowed is None:
        return
    for key in body:
        if isinstance(key, str) and key not in allowed:  # other keys: pydantic's message
            hint = suggest(str(key), allowed)
            suffix = f"; did you mean {hint!r}?" if hint else ""
            raise ctx.error((*loc, key), f"unknown key {shown(key)}{suffix}")


def _check_verdict_names(ctx: _Ctx, loc: Loc, check: object) -> None:
    """A check's named verdicts must be listable (the engine asks every run): one line if
    its ``verdict_names()`` fails or gives something other than names."""
    try:
        names = verdict_names(check)
    except Exception as exc:  # noqa: BLE001 - the user's method failed: one line, no trace
        raise ctx.error(
            (*loc, "type"), f"verdict_names() raised {type(exc).__name__}: {exc}"
        ) from None
    bad = [n for n in names if not isinstance(n, str) or not n or "." in n]
    if bad:
        raise ctx.error(
            (*loc, "type"), f"verdict_names() must give names without dots, got {shown(bad[0])}"
        )


def _is_dotted(kind: object) -> bool:
    """Whether a ``type`` names a class by dotted path (``module.Class`` or ``module:Class``)."""
    return isinstance(kind, str) and ("." in kind or ":" in kind)


def _user_check(ctx: _Ctx, loc: Loc, dotted: str, body: dict[str, Any], base: Path) -> Any:
    """The user's check class named by ``type: module.Class``, built from the check's keys."""
    at: Loc = (*loc, "type")
    try:
        cls = load_object(dotted, [base])
    except ImportTargetError as exc:
        raise ctx.error(at, str(exc)) from None
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or not callable(
        getattr(cls, "evaluate", None)
    ):
        raise ctx.error(
            at, f"{shown(dotted)} is not a check class (a pydantic model with an evaluate method)"
        )
    fields = {k: v for k, v in body.items() if k != "type"}
    # even a model that ignores unknown keys: a typo is an error
    _refuse_keys(ctx, loc, fields, yaml_keys(cls) - {"type"})
    try:
        return cls.model_validate(fields)
    except ValidationError as exc:
        raise ctx.from_validation(exc, fields, loc, model=cls) from None
    except Exception as exc:  # noqa: BLE001 - the user's validator failed: one line, no trace
        raise ctx.error(at, f"{shown(dotted)} raised {type(exc).__name__}: {exc}") from None


def _build_rubric(ctx: _Ctx, name: str, spec: RubricSpec, checks: dict[str, NamedCheck]) -> Rubric:
    loc: Loc = ("rubrics", name)
    for check_name in spec.weights:
        if check_name not in checks and not _is_named_verdict(check_name, checks):
            raise ctx.error(
                (*loc, "weights", check_name),
                f"unknown check {shown(check_name)}; the suite defines: {', '.join(checks)}",
            )
    items = [RubricItem(c, w.weight, w.required, w.not_applicable) for c, w in spec.weights.items()]
    if spec.outcome_rules is not None:
        rules = tuple(r.build() for r in spec.outcome_rules)
    elif spec.outcomes is not None:
        rules = spec.outcomes.build()
    else:
        rules = None
    try:
        return Rubric.build(
            name,
            items,
            outcome_rules=rules,
            when=build_conditions(spec.when),
            bands=spec.bands.build() if spec.bands else None,
        )
    except RubricError as exc:
        raise ctx.error((*loc, "weights"), str(exc)) from None


def _is_named_verdict(name: str, checks: dict[str, NamedCheck]) -> bool:
    """Whether ``name`` is ``check.verdict``, a named verdict some check answers."""
    owner, _, key = name.rpartition(".")
    return owner in checks and key in verdict_names(checks[owner].check)


def _build_policy(ctx: _Ctx, spec: SuiteSpec, rubrics: tuple[Rubric, ...]) -> PassPolicy:
    t = spec.thresholds
    names = [r.name for r in rubrics]
    for i, name in enumerate(t.score_rubrics or ()):
        if name not in names:
            raise ctx.error(
                ("thresholds", "score_rubrics", i),
                f"unknown rubric {shown(name)}; the suite defines: {', '.join(names)}",
            )
    if t.pass_policy is PassMode.ALL_CHECKS and "pass_threshold" in t.model_fields_set:
        raise ctx.error(
            ("thresholds", "pass_threshold"),
            "pass_threshold is not used with pass_policy: all_checks (a case passes when "
            "every applicable check passes); remove one of them",
        )
    outcome_checks = tuple(n for n, c in ctx.checks.items() if decides_pass(c.check))
    return PassPolicy(
        pass_threshold=t.pass_threshold,
        metrics_pass_threshold=t.metrics_pass_threshold,
        cases_pass_threshold=t.cases_pass_threshold,
        outcome_checks=outcome_checks,
        score_rubrics=tuple(t.score_rubrics) if t.score_rubrics else None,
        pass_policy=t.pass_policy,
    )


def _build_gates(ctx: _Ctx, spec: SuiteSpec, rubrics: tuple[Rubric, ...]) -> tuple[Any, ...]:
    if spec.gates is None:
        return DEFAULT_GATES
    by_name = {r.name: r for r in rubrics}
    for i, g in enumerate(spec.gates):
        if g.rubric is not None and g.rubric not in by_name:
            raise ctx.error(
                ("gates", i, "rubric"),
                f"unknown rubric {shown(g.rubric)}; the suite defines: {', '.join(by_name)}",
            )
        if g.metric is GateMetric.CALIBRATED_PASS_RATE:
            found = ctx.checks.get(g.check or "")
            if found is None or not found.judged:
                judged = [n for n, c in ctx.checks.items() if c.judged]
                raise ctx.error(
                    ("gates", i, "check"),
                    f"{shown(g.check)} is not a judge check of the suite; a calibrated pass "
                    f"rate is a judge check's (judge checks: {', '.join(judged) or 'none'})",
                )
        if g.metric is GateMetric.CHECK_PASS_RATE and g.rubric is not None:
            names = by_name[g.rubric].check_names
            if g.check not in names:
                raise ctx.error(
                    ("gates", i, "check"),
                    f"rubric {shown(g.rubric)} has no check {shown(g.check)}; "
                    f"it has: {', '.join(names)}",
                )
    return tuple(g.build() for g in spec.gates)
