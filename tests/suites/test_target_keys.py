"""A misspelt key in a target block of any kind gets a "did you mean" from that kind's keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkweigh.errors import SuiteError
from checkweigh.suites import load_suite

SUITE = """\
name: t
cases: cases.jsonl
target:
{target}
checks:
  c: {{type: equals, path: final_state.x, value: 1}}
rubrics:
  r: {{weights: {{c: 1}}}}
"""


@pytest.mark.parametrize(
    ("target", "said"),
    [
        (
            "  kind: command\n  comand: [sh]",
            "target.comand: unknown key 'comand'; did you mean 'command'?",
        ),
        (
            "  kind: http\n  urll: http://127.0.0.1:9/a",
            "target.urll: unknown key 'urll'; did you mean 'url'?",
        ),
        (
            "  agent: m:f\n  timeout: 3",
            "target.timeout: unknown key 'timeout'; did you mean 'timeout_s'?",
        ),
        ("  kind: http\n  url: http://127.0.0.1:9/a\n  retrys: 3", "did you mean 'retries'?"),
    ],
)
def test_a_misspelt_target_key_names_the_right_one(tmp_path: Path, target: str, said: str) -> None:
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "input": 1}\n')
    (tmp_path / "suite.yaml").write_text(SUITE.format(target=target))
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path / "suite.yaml")
    assert said in str(caught.value)
    assert str(caught.value).startswith(f"{tmp_path / 'suite.yaml'}:")
