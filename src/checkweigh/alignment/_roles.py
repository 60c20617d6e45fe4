"""What answered each check of a stored run (a yes/no judge, a graded judge's metric, or code),
read from the run's configuration snapshot, and the human grades checked against it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..core import CheckKind, CheckRole
from ..suites import shown
from ._labels import LabelFileError, LabelLine


def check_roles(config: Mapping[str, Any], verdict_names: Iterable[str]) -> dict[str, CheckRole]:
    """The role of each check the run configured, and of each named verdict
    (``CHECK.METRIC``) among ``verdict_names``: a graded check's metrics pass at its
    ``pass_threshold``; another judged check's named verdicts are yes/no like it."""
    from ..judges import GradedJudgeCheck, JudgedCheck
    from ..suites import BUILTIN_CHECKS

    default = GradedJudgeCheck.model_fields["pass_threshold"].default
    checks = config.get("checks")
    roles: dict[str, CheckRole] = {}
    graded: dict[str, float] = {}
    for name, entry in (checks if isinstance(checks, dict) else {}).items():
        spec = entry.get("spec") if isinstance(entry, dict) else None
        kind_name = spec.get("type") if isinstance(spec, dict) else None
        cls = BUILTIN_CHECKS.get(kind_name)
        if cls is not None and issubclass(cls, GradedJudgeCheck):
            assert isinstance(spec, dict)
            graded[name] = float(spec.get("pass_threshold", default))
            roles[name] = CheckRole(CheckKind.GRADED)
        elif cls is not None and issubclass(cls, JudgedCheck):
            roles[name] = CheckRole(CheckKind.BINARY)
        else:
            roles[name] = CheckRole(CheckKind.OTHER)
    for name in verdict_names:
        owner, dot, _ = name.partition(".")
        if not dot or owner not in roles:
            continue
        if owner in graded:
            roles[name] = CheckRole(CheckKind.GRADED, graded[owner])
        else:
            roles[name] = roles[owner]
    return roles


def check_grades(lines: Iterable[LabelLine], roles: Mapping[str, CheckRole], path: Path) -> None:
    """Refuse a human grade the run cannot compare, or one that contradicts its own label.

    A grade belongs to a graded metric (``CHECK.METRIC``), and its label must say what the
    grade says at the metric's threshold: otherwise one of the two is a slip, and comparing
    either would be a silent wrong answer.

    Raises:
        LabelFileError: naming the file, the line and the field.
    """
    for line, label, _ in lines:
        if label.grade is None:
            continue
        role = roles.get(label.check)
        if role is None:
            continue  # the check is not in the run: reported as not compared
        if role.pass_threshold is None:
            raise LabelFileError(
                f"a grade is for a graded metric (CHECK.METRIC of a graded check), and "
                f"{shown(label.check)} is a {role.kind.value} check in this run; expected "
                "no grade",
                file=path,
                line=line,
                field="grade",
            )
        passes = label.grade / 5 * 100 >= role.pass_threshold  # the graded judge's own rule
        if passes != label.label:
            reaches = "reaches" if passes else "is below"
            raise LabelFileError(
                f"grade {label.grade:g} {reaches} the pass threshold of {label.check} "
                f"({role.pass_threshold:g}/100, grade {role.pass_threshold / 20:g}), so the "
                f"label should be {'yes' if passes else 'no'}, got "
                f"{'yes' if label.label else 'no'}; expected a label and grade that agree",
                file=path,
                line=line,
                field="label",
            )


def refuse_grades(lines: Iterable[LabelLine], path: Path) -> None:
    """Refuse a grade where only yes/no labels are kept (the store), rather than drop it.

    Raises:
        LabelFileError: naming the file, the first graded line and ``grade``.
    """
    for line, label, _ in lines:
        if label.grade is not None:
            raise LabelFileError(
                "the store keeps yes/no labels only, so a grade would be lost; expected no "
                f"grade (compare grades with `checkweigh align RUN {path}`)",
                file=path,
                line=line,
                field="grade",
            )
