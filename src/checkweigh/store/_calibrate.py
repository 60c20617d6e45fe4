"""A stored run's judge checks calibrated against the labels the store holds now."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ..core import CheckCalibration, calibrate, reviewer_kappa, trust
from ._labels import CheckLabels, read_labels, run_labels
from ._store import RunInfo, Store


def judge_checks_of(config: dict[str, Any]) -> list[str]:
    """The checks of a run's configuration that asked a judge, in suite order."""
    out = []
    for name, snapshot in (config.get("checks") or {}).items():
        judged = snapshot.get("judged")
        if judged is None:  # runs stored before the flag: a judge check's version says so
            judged = str(snapshot.get("version", "")).startswith("judge")
        if judged:
            out.append(name)
    return out


def trust_bars(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each judge check's ``trust:`` as its suite entry wrote it."""
    out = {}
    for name, snapshot in (config.get("checks") or {}).items():
        spec = snapshot.get("spec")
        if isinstance(spec, dict) and isinstance(spec.get("trust"), dict):
            out[name] = spec["trust"]
    return out


def calibrate_run(
    store: Store, info: RunInfo, *, include: Collection[str] = (), every: bool = False
) -> list[CheckCalibration]:
    """The run's judge checks measured against the store's labels.

    A judge check that has no labels in the store and no ``trust:`` bar is left out (there is
    nothing to correct its rate with, and reading its executions costs a pass over the run),
    unless ``every`` or it is in ``include`` (a gate reads its calibrated rate).
    """
    names = judge_checks_of(info.config)
    if not names:
        return []
    bars = trust_bars(info.config)
    labelled = {label.check for label in read_labels(store, checks=names)}
    wanted = [n for n in names if every or n in include or n in labelled or n in bars]
    if not wanted:
        return []
    rows = run_labels(store, info.id, wanted)
    return [calibration_of(rows[name], bars.get(name), info.config.get("judge")) for name in wanted]


def calibration_of(
    labelled: CheckLabels, bar: dict[str, Any] | None, judge: str | None
) -> CheckCalibration:
    """One check's figures, trust verdict and unused labels."""
    yes, no = labelled.counts()
    figures = calibrate(labelled.check, yes, no, labelled.confusion())
    verdict = None
    if bar is not None:
        verdict = trust(figures, min_kappa=bar.get("min_kappa"), min_labels=bar.get("min_labels"))
    judges = {
        label.judge
        for e in labelled.executions
        for label in e.labels
        if label.judge and label.judge != judge
    }
    return CheckCalibration(
        check=labelled.check,
        figures=figures,
        trust=verdict,
        stale_criterion=labelled.stale_criterion,
        stale_evidence=labelled.stale_evidence,
        reviewers_split=labelled.split,
        reviewers=len(labelled.reviewers()),
        reviewer_kappa=reviewer_kappa(labelled.reviewer_pairs()),
        other_judges=sorted(judges),
    )
