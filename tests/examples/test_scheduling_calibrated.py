"""The labelling walkthrough's material (docs/labelling.md): the recorded judge answers every
tone question of the demo offline, the 30 labels bind to its executions, and the figures the
pages quote are what `checkweigh run` computes from them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from checkweigh.cli import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scheduling"


def _cli(*args: str, tmp: Path) -> tuple[int, str]:
    env: dict[str, str | None] = {
        "CHECKWEIGH_DB": f"sqlite:///{tmp / 'runs.db'}",
        "CHECKWEIGH_CACHE_DIR": str(tmp / "judge-cache"),
        "OPENAI_API_KEY": None,  # replay needs no key
        "COLUMNS": "200",
    }
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout + result.stderr


def _replay(suite: str, tmp: Path, out: Path) -> tuple[int, str, dict[str, Any]]:
    code, text = _cli(
        "run", str(EXAMPLE / suite), "--judge", "openai:smollm2", "--replay",
        "--json", str(out), "-q", tmp=tmp,
    )  # fmt: skip
    return code, text, json.loads(out.read_text())


def test_calibrated_suite_is_the_demo_with_a_trust_bar_and_a_calibrated_gate() -> None:
    demo = yaml.safe_load((EXAMPLE / "suite.yaml").read_text())
    calibrated = yaml.safe_load((EXAMPLE / "calibrated.yaml").read_text())
    tone = calibrated["checks"]["appropriate_tone"]
    assert tone.pop("trust") == {"min_kappa": 0.6, "min_labels": 30}
    gate = calibrated["gates"].pop()
    assert gate == {"check": "appropriate_tone", "metric": "calibrated_pass_rate", "min": 0.8}
    assert calibrated == demo


def test_the_walkthrough_replays_offline_and_computes_the_figures_it_quotes(
    tmp_path: Path,
) -> None:
    shutil.copytree(EXAMPLE / "smollm2-cache", tmp_path / "judge-cache")
    code, out, report = _replay("suite.yaml", tmp_path, tmp_path / "demo.json")
    assert code == 0, out
    states = [r["verdicts"]["appropriate_tone"]["state"] for r in report["results"]]
    assert (states.count("passed"), states.count("failed"), len(states)) == (21, 22, 43)
    assert "0 call(s), 43 cache hit(s), 0 error(s)" in out

    code, out, report = _replay("calibrated.yaml", tmp_path, tmp_path / "before.json")
    assert code == 4, out
    (before,) = report["summary"]["calibration"]
    assert before["trust"]["status"] == "inconclusive"
    assert before["trust"]["needs"] == "30 more labels (30 required, 0 made)"

    code, out = _cli(
        "labels", "import", str(EXAMPLE / "tone-labels.csv"), "--run", "latest", tmp=tmp_path
    )
    assert code == 0, out
    assert "stored 30 label(s) from 30 line(s)" in out

    code, out, report = _replay("calibrated.yaml", tmp_path, tmp_path / "after.json")
    assert code == 4, out
    (after,) = report["summary"]["calibration"]
    figures = after["figures"]
    assert figures["confusion"] == {"true_yes": 14, "false_yes": 1, "false_no": 14, "true_no": 1}
    # the worked example of docs/concepts/calibration.md, by hand
    assert figures["calibrated_pass_rate"] == pytest.approx(21 / 43 * 14 / 15 + 22 / 43 * 14 / 15)
    assert round(figures["sensitivity"], 3) == 0.488
    assert round(figures["specificity"], 3) == 0.512
    low, high = figures["calibrated_low"], figures["calibrated_high"]
    assert (round(low, 2), round(high, 2)) == (0.79, 0.98)
    assert (after["trust"]["status"], figures["kappa"]) == ("untrusted", 0.0)
    gate = report["summary"]["gates"][-1]
    assert (gate["gate"], gate["status"]) == (
        "appropriate_tone calibrated_pass_rate >= 0.8",
        "not_decided",
    )
