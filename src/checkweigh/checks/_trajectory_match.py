"""``trajectory_match``: the trace's calls against reference calls, with their arguments."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from ..core import MISSING, Case, FieldPath, Step, StepKind, Verdict, failed, passed
from ._argpaths import compile_paths, parse_arg_path
from ._calls import (
    Actual,
    ArgRule,
    ArgsOverride,
    Expected,
    Pairing,
    ReferenceCall,
    TrajectoryMode,
    parse_reference,
)
from ._dedupe import Dedupe
from ._model import Compiled, Missing, Runner, absent, missing_needs_a_path, parse_path, short
from ._steps import StepMatch, parse_json_text
from ._values import ArgMode
from ._watch import Held, Probe, reaches

_TOOL_KINDS: tuple[StepKind, ...] = ("tool_call",)


class TrajectoryMatch(Compiled):
    """The trace's calls (steps of ``kinds``, filtered by ``select``) match the ``reference``
    calls in ``mode``, their arguments compared by ``arguments_mode`` and ``overrides``.

    strict: the same calls in the same order; unordered: the same calls in any order (a
    multiset: repeats count); subset: every call made is in the reference (nothing unexpected);
    superset: every reference call was made (extra calls allowed). Calls pair one to one by a
    maximum matching, so the order of equal calls never changes the verdict. A reference call
    given by name alone matches any arguments.
    """

    version: ClassVar[str] = "2"

    type: Literal["trajectory_match"] = "trajectory_match"
    reference: list[ReferenceCall] | None = None
    """The expected calls, in order: names, or ``{name, arguments}``."""
    reference_path: str | None = None
    """Or: where the case holds them, e.g. ``ground_truth.actions`` (names, ``{name,
    arguments}``, tau-bench's ``{name, kwargs}`` or OpenAI's ``{function: {name,
    arguments}}``)."""
    missing: Missing = "not_applicable"
    """What a case without a reference at ``reference_path`` (absent or null) gets:
    ``not_applicable`` (default), ``fail`` or ``error``."""
    mode: TrajectoryMode = "strict"
    """How to compare the sequences."""
    arguments_mode: ArgMode = "exact"
    """How a call's arguments compare with the reference's: ``exact``, ``ignore``, ``subset``
    (the call's arguments are a subset of the reference's) or ``superset`` (at least the
    reference's); objects nested at any depth are compared the same way."""
    overrides: dict[str, ArgsOverride] = Field(default_factory=dict)
    """Per tool name: an argument mode, a list of argument paths to compare, or ``{mode,
    compare | ignore, unordered}``."""
    unordered: list[str] = Field(default_factory=list)
    """Argument paths whose lists compare in any order, e.g. ``[item_ids, new_item_ids]``:
    equal as multisets, their items paired one to one (compared by ``arguments_mode``)."""
    dedupe: Dedupe | None = None
    """Keep one of the selected calls per tool and key before comparing, e.g. ``{key:
    arguments.order_id, keep: last}`` (an agent's corrected call replaces its first)."""
    select: StepMatch | None = None
    """Which of the trace's steps count (e.g. ``{name: 'update_*', error: false}``); its name
    criterion filters the reference too."""
    kinds: list[StepKind] = Field(default_factory=lambda: list(_TOOL_KINDS))
    """Which step kinds make up the trajectory."""

    @model_validator(mode="after")
    def _one_reference(self) -> TrajectoryMatch:
        if (self.reference is None) == (self.reference_path is None):
            raise ValueError("give exactly one of 'reference' or 'reference_path'")
        if self.reference_path is not None:
            parse_path(self.reference_path)
        missing_needs_a_path(self, self.reference_path, "reference_path")
        compile_paths(self.unordered)
        return self

    def case_probes(self) -> list[Probe]:
        """Its case paths, each ``overrides`` key (a tool some case called) and each
        ``compare`` / ``ignore`` path (reached in the arguments of some call of that tool, in a
        trace or a reference)."""
        probes = super().case_probes()
        kinds = frozenset(self.kinds)
        calls = self._calls_of(kinds)
        for text in self.unordered:
            probes.append(
                Probe("unordered", text, _argument_held(None, parse_arg_path(text), calls))
            )
        if self.dedupe is not None:
            parts = parse_arg_path(self.dedupe.argument_path)
            probes.append(Probe("dedupe.key", self.dedupe.key, _argument_held(None, parts, calls)))
        for tool, override in self.overrides.items():
            probes.append(Probe("overrides key", tool, _called(tool, kinds)))
            for field in ("compare", "ignore", "unordered"):
                for text in getattr(override, field) or ():
                    held = _argument_held(tool, parse_arg_path(text), calls)
                    where = f"overrides.{tool}.{field}"
                    probes.append(Probe(where, text, held, ("overrides key", tool)))
        return probes

    def _calls_of(self, kinds: frozenset[StepKind]) -> Callable[[Case], Iterator[tuple[str, Any]]]:
        """Every call a case compares, as (name, arguments): the trace's and the reference's."""
        inline = [(r.name, r.arguments) for r in self.reference or ()]
        get = FieldPath.parse(self.reference_path).getter if self.reference_path else None

        def calls(case: Case) -> Iterator[tuple[str, Any]]:
            for step in case.trace:
                if step.kind in kinds and step.name is not None:
                    yield step.name, parse_json_text(step.arguments)
            yield from inline
            ref = get(case) if get is not None else None
            if isinstance(ref, list):
                parsed = parse_reference(ref)
                if isinstance(parsed, list):
                    yield from ((e.name, e.arguments) for e in parsed)

        return calls

    def compile(self) -> Runner:
        mode, kinds = self.mode, frozenset(self.kinds)
        loose = self.unordered
        rules = {name: o.rule(self.arguments_mode, loose) for name, o in self.overrides.items()}
        default = ArgRule(self.arguments_mode, unordered=compile_paths(loose) if loose else None)
        pairing = Pairing(default, rules)
        dedupe = self.dedupe.apply if self.dedupe is not None else None
        by_name = self.select.names_only if self.select is not None else None
        select = self.select
        tester = select.tester() if select is not None else None
        named = select is not None and select.names_only is not None
        find = select.finder() if select is not None and named else None

        inline: list[Expected] | None = None
        get_reference = None
        if self.reference is not None:
            parsed = parse_reference([r.model_dump() for r in self.reference], by_name)
            assert not isinstance(parsed, str)  # validated as ReferenceCall models
            inline = parsed
        else:
            assert self.reference_path is not None
            get_reference = FieldPath.parse(self.reference_path).getter
        no_reference = absent(self.missing, f"no reference at {self.reference_path}")

        def run(case: Case) -> Verdict:
            if inline is not None:
                expected = inline
            else:
                assert get_reference is not None
                ref = get_reference(case)
                if ref is MISSING or ref is None:
                    return no_reference
                parsed = parse_reference(ref, by_name)
                if isinstance(parsed, str):
                    return failed(parsed)
                expected = parsed
            trace = case.trace
            if tester is None:
                actual = [Actual.of(i, s) for i, s in enumerate(trace) if s.kind in kinds]
            elif find is not None:  # a select by name: only the steps of those names
                hits = find(case)
                if isinstance(hits, Verdict):
                    return hits
                actual = [Actual.of(i, trace[i]) for i in hits if trace[i].kind in kinds]
            else:
                test = tester(case)
                if isinstance(test, Verdict):
                    return test
                actual = [
                    Actual.of(i, s) for i, s in enumerate(trace) if s.kind in kinds and test(s)
                ]

            if dedupe is not None:
                actual = dedupe(actual)

            def unselected(name: str) -> str:
                return _left_out(trace, kinds, name, actual)

            why = pairing.compare(mode, actual, expected, unselected)
            if why is None:
                return passed(f"trajectory {short([a.name for a in actual])} matches ({mode})")
            return failed(why)

        return run


def _called(tool: str, kinds: frozenset[StepKind]) -> Held:
    def held(case: Case) -> bool:
        return any(s.name == tool and s.kind in kinds for s in case.trace)

    return held


def _argument_held(
    tool: str | None, parts: tuple[Any, ...], calls: Callable[[Case], Iterator[tuple[str, Any]]]
) -> Held:
    """Whether some call of ``tool`` (of any tool: None) a case compares reaches ``parts``."""

    def held(case: Case) -> bool:
        return any(
            (tool is None or name == tool) and reaches(args, parts) for name, args in calls(case)
        )

    return held


def _left_out(trace: list[Step], kinds: frozenset[StepKind], name: str, taken: list[Actual]) -> str:
    """Why a step named ``name`` was not compared (it errored, or the selection left it out)."""
    counted = {a.step for a in taken}
    for i, step in enumerate(trace):
        if step.label == name and step.kind in kinds and i not in counted:
            if step.error is not None:
                return f"{name} at step {i + 1} errored ({short(step.error, 40)}), not counted"
            return f"{name} at step {i + 1} was not selected"
    return ""
