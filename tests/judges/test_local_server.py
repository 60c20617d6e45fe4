"""The demo's judge checks against a real local OpenAI-compatible server: llama-cpp-python's
server running SmolLM2-135M-Instruct (started by scripts/with_llama.sh).

That server rejects ``response_format: json_schema`` with a 500 naming response_format and
accepts ``json_object`` with a schema. The model is far too small to judge well: the test is
about the wire, the schema and the parsing, so it asks only that every judge check comes back
passed or failed, none errored.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.llama import llama_url

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "examples" / "scheduling" / "suite.yaml"


def test_demo_judge_checks_through_a_real_local_server(tmp_path: Path) -> None:
    url = llama_url()
    out = tmp_path / "run.json"
    env = {
        **os.environ,
        "OPENAI_BASE_URL": url,
        "OPENAI_API_KEY": "sk-local-not-a-real-key",
        "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
        "COLUMNS": "200",
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "checkweigh",
            "run",
            str(SUITE),
            "--judge",
            "openai:smollm2",
            "--db",
            f"sqlite:///{tmp_path / 'runs.db'}",
            "--json",
            str(out),
            "-q",
            # a busy CI machine runs the model slowly; the test is about the wire, not speed
            "--judge-timeout",
            "900",
            "--judge-deadline",
            "1000",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=2400,
    )
    # 0 or 1: whether a 135M model's verdicts pass the demo's gates is not the point
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    verdicts = [r["verdicts"]["appropriate_tone"] for r in report["results"]]
    assert len(verdicts) == 43
    states = [v["state"] for v in verdicts]
    assert "errored" not in states, [v for v in verdicts if v["state"] == "errored"][:3]
    assert {"passed", "failed"} & set(states)
    for v in verdicts:
        if v["state"] in ("passed", "failed"):
            assert v["reason"].strip()
    assert report["summary"]["errored_executions"] == 0
    # the server refused json_schema: the run says which format the judge settled on
    notes = " ".join(report["summary"]["notes"])
    assert "judge output format: json_object" in notes, notes
    assert "sk-local-not-a-real-key" not in proc.stdout + proc.stderr + out.read_text()
