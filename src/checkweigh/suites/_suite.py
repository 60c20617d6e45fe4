"""A loaded, resolved suite: everything a run needs, and its snapshot for the store."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..checks import NamedCheck
from ..core import Gate, PassPolicy, Rubric
from ..importers import OnBadRecord
from ._schema import SuiteSpec
from ._source import CasesSource
from ._targets import TargetSpecBase


@dataclass(frozen=True)
class Suite:
    """A suite ready to run: resolved checks, built rubrics and gates."""

    name: str
    path: Path
    spec: SuiteSpec
    checks: dict[str, NamedCheck]
    rubrics: tuple[Rubric, ...]
    gates: tuple[Gate, ...]
    cases: CasesSource
    """Where the cases come from (a cases file, or logs read through an importer)."""
    policy: PassPolicy = field(default_factory=PassPolicy)
    """Case pass/fail and the run's two pass dimensions."""

    @property
    def repeats(self) -> int:
        """Tries of each case per run, unless the run says otherwise."""
        return self.spec.repeats

    @property
    def cases_path(self) -> Path:
        """The file the cases are read from."""
        return self.cases.path

    def with_cases(
        self, path: Path | None = None, on_bad_record: OnBadRecord | None = None
    ) -> Suite:
        """This suite reading another file (``--cases``; the format stays the suite's) or
        with another bad-record choice (``--on-bad-record``).

        Raises:
            InputError: ``skip`` for a suite that reads a checkweigh cases file.
        """
        source = self.cases.replace(path=path, on_bad_record=on_bad_record)
        return dataclasses.replace(self, cases=source)

    @property
    def base_dir(self) -> Path:
        """The folder the suite file sits in (importable for agents and checks)."""
        return self.path.parent

    @property
    def target(self) -> TargetSpecBase | None:
        """The agent target, if the suite runs one."""
        return self.spec.target

    @property
    def has_async_checks(self) -> bool:
        """Whether any check must be awaited."""
        return any(c.is_async for c in self.checks.values())

    def notes(self) -> list[str]:
        """Things a report should say about the configuration (e.g. normalized weights)."""
        return [n for r in self.rubrics if (n := r.normalization_note())]

    def snapshot(self) -> dict[str, Any]:
        """The resolved configuration, stored with every run so later edits change nothing."""
        return {
            "suite": self.name,
            "description": self.spec.description,
            "suite_path": str(self.path),
            "cases_path": str(self.cases_path),
            **self.cases.snapshot(),
            "target": self.spec.target.model_dump() if self.spec.target else None,
            "checks": {
                name: {
                    "version": nc.version,
                    "spec": self.spec.checks[name],
                    "when": [c.describe() for c in nc.when],
                    "judged": nc.judged,
                }
                for name, nc in self.checks.items()
            },
            "rubrics": [
                {
                    "name": r.name,
                    "weights": {i.check: i.weight for i in r.items},
                    "normalized_weights": r.normalized_weights,
                    "weight_total": r.weight_total,
                    "required": [i.check for i in r.items if i.required],
                    "not_applicable": {i.check: i.not_applicable.value for i in r.items},
                    "when": [c.describe() for c in r.when],
                    "outcome_rules": [rule.describe() for rule in r.outcome_rules],
                    "bands": {
                        "production_ready": r.bands.production_ready,
                        "needs_improvement": r.bands.needs_improvement,
                    },
                }
                for r in self.rubrics
            ],
            "gates": [g.describe() for g in self.gates],
            "thresholds": self.policy.snapshot(),
        }
