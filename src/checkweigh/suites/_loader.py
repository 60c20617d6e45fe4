"""Reading a suite file into a :class:`Suite`, with one-line errors for every mistake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..checks import CheckSpec, ImportTargetError, NamedCheck, PythonCheck, _fields, _trajectory
from ..checks._python import load_object, resolve_python_check
from ..core import DEFAULT_GATES, Condition, GateMetric, Rubric, RubricError, RubricItem
from ..errors import SuiteError
from ._errors import first_error, loc_text
from ._schema import (
    BandsSpec,
    ConditionSpec,
    GateSpec,
    OutcomeDefaults,
    OutcomeRuleSpec,
    RubricSpec,
    SuiteSpec,
    TargetSpec,
    WeightSpec,
    build_conditions,
)
from ._suite import Suite
from ._yaml import LineMap, Loc, YamlSyntaxError, load_yaml

_CHECK_ADAPTER: TypeAdapter[Any] = TypeAdapter(CheckSpec)
_COND_ADAPTER: TypeAdapter[Any] = TypeAdapter(ConditionSpec | list[ConditionSpec])
_CHECK_EXTRAS = ("when", "description")


def _known_keys() -> set[str]:
    models: list[type[BaseModel]] = [
        SuiteSpec,
        TargetSpec,
        RubricSpec,
        WeightSpec,
        OutcomeDefaults,
        OutcomeRuleSpec,
        BandsSpec,
        GateSpec,
        ConditionSpec,
        PythonCheck,
        _trajectory.StepMatch,
    ]
    for mod in (_fields, _trajectory):
        models += [
            v for v in vars(mod).values() if isinstance(v, type) and issubclass(v, BaseModel)
        ]
    keys = {k for m in models for k in m.model_fields}
    return keys | {"in", *_CHECK_EXTRAS}


class _Ctx:
    """Where errors point: the file and its line map."""

    def __init__(self, path: Path, lines: LineMap) -> None:
        self.path = path
        self.lines = lines
        self._keys: set[str] | None = None

    def error(self, loc: Loc, message: str) -> SuiteError:
        return SuiteError(
            message, file=self.path, line=self.lines.line(loc), field=loc_text(loc) or None
        )

    def from_validation(self, exc: ValidationError, prefix: Loc = ()) -> SuiteError:
        if self._keys is None:
            self._keys = _known_keys()
        loc, message = first_error(exc, self._keys)
        return self.error(prefix + loc, message)


def load_suite(path: str | Path) -> Suite:
    """Load, validate and resolve a suite file.

    Raises:
        SuiteError: one line naming the file, line, field and what was expected.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SuiteError("suite file not found", file=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"cannot read suite file: {exc}", file=path) from None
    try:
        data, lines = load_yaml(text)
    except YamlSyntaxError as exc:
        raise SuiteError(f"invalid YAML: {exc}", file=path, line=exc.line) from None
    ctx = _Ctx(path, lines)
    if not isinstance(data, dict):
        raise ctx.error((), "expected a mapping with name, cases, checks and rubrics")
    try:
        spec = SuiteSpec.model_validate(data)
    except ValidationError as exc:
        raise ctx.from_validation(exc) from None
    base = path.parent.resolve()
    checks = {name: _build_check(ctx, name, raw, base) for name, raw in spec.checks.items()}
    rubrics = tuple(_build_rubric(ctx, name, r, checks) for name, r in spec.rubrics.items())
    gates = _build_gates(ctx, spec, rubrics)
    cases_path = (base / spec.cases).resolve()
    if not cases_path.is_file():
        raise ctx.error(("cases",), f"cases file not found: {cases_path}")
    if spec.target is not None:
        try:
            agent = load_object(spec.target.agent, [base])
        except ImportTargetError as exc:
            raise ctx.error(("target", "agent"), str(exc)) from None
        if not callable(agent):
            raise ctx.error(("target", "agent"), f"{spec.target.agent} is not callable")
    return Suite(spec.name, path, spec, checks, rubrics, gates, cases_path)


def _build_check(ctx: _Ctx, name: str, raw: dict[str, Any], base: Path) -> NamedCheck:
    loc: Loc = ("checks", name)
    body = {k: v for k, v in raw.items() if k not in _CHECK_EXTRAS}
    try:
        spec = _CHECK_ADAPTER.validate_python(body)
    except ValidationError as exc:
        raise ctx.from_validation(exc, loc) from None
    when: tuple[Condition, ...] = ()
    if "when" in raw:
        try:
            when = build_conditions(_COND_ADAPTER.validate_python(raw["when"]))
        except ValidationError as exc:
            raise ctx.from_validation(exc, (*loc, "when")) from None
    if isinstance(spec, PythonCheck):
        try:
            return NamedCheck.of(name, resolve_python_check(spec, [base]), when)
        except ImportTargetError as exc:
            raise ctx.error((*loc, "function"), str(exc)) from None
    return NamedCheck.of(name, spec, when)


def _build_rubric(ctx: _Ctx, name: str, spec: RubricSpec, checks: dict[str, NamedCheck]) -> Rubric:
    loc: Loc = ("rubrics", name)
    for check_name in spec.weights:
        if check_name not in checks:
            raise ctx.error(
                (*loc, "weights", check_name),
                f"unknown check '{check_name}'; the suite defines: {', '.join(checks)}",
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


def _build_gates(ctx: _Ctx, spec: SuiteSpec, rubrics: tuple[Rubric, ...]) -> tuple[Any, ...]:
    if spec.gates is None:
        return DEFAULT_GATES
    by_name = {r.name: r for r in rubrics}
    for i, g in enumerate(spec.gates):
        if g.rubric is not None and g.rubric not in by_name:
            raise ctx.error(
                ("gates", i, "rubric"),
                f"unknown rubric '{g.rubric}'; the suite defines: {', '.join(by_name)}",
            )
        if g.metric is GateMetric.CHECK_PASS_RATE and g.rubric is not None:
            names = by_name[g.rubric].check_names
            if g.check not in names:
                raise ctx.error(
                    ("gates", i, "check"),
                    f"rubric '{g.rubric}' has no check '{g.check}'; it has: {', '.join(names)}",
                )
    return tuple(g.build() for g in spec.gates)
