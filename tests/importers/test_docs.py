"""docs/importers.md: its example files are the files in examples/logs/, and every command it
shows runs as shown (exit 0) from a copy of that folder, through the real CLI."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "importers.md"
EXAMPLES = ROOT / "examples" / "logs"
TEXT = DOC.read_text(encoding="utf-8")

# a block may carry tests/docs/test_pages.py's marker comment on the line above it
SHOWN_FILES = re.findall(
    r"`examples/logs/([\w.-]+)`[^\n]*:\n\n(?:<!-- [^\n]* -->\n)?```\w*\n(.*?)```", TEXT, re.S
)
COMMANDS = re.findall(r"```sh\n(.*?)```", TEXT, re.S)


def test_the_doc_shows_every_format_and_every_example_file() -> None:
    shown = {name for name, _ in SHOWN_FILES}
    assert shown == {p.name for p in EXAMPLES.iterdir()}
    for fmt in ("openai", "openai-responses", "anthropic", "mapping"):
        assert f"checkweigh import {fmt} " in TEXT


@pytest.mark.parametrize(("name", "body"), SHOWN_FILES, ids=[n for n, _ in SHOWN_FILES])
def test_a_shown_file_is_the_example_file(name: str, body: str) -> None:
    assert (EXAMPLES / name).read_text(encoding="utf-8") == body


@pytest.mark.parametrize("block", COMMANDS, ids=[b.splitlines()[0] for b in COMMANDS])
def test_the_documented_commands_run(tmp_path: Path, block: str) -> None:
    folder = shutil.copytree(EXAMPLES, tmp_path / "logs")
    for line in block.strip().splitlines():
        args = shlex.split(line)
        assert args[0] == "checkweigh"
        proc = subprocess.run(
            [sys.executable, "-c", "from checkweigh.cli import main; main()", *args[1:]],
            capture_output=True,
            text=True,
            cwd=folder,
            timeout=60,
        )
        assert (proc.returncode, proc.stderr.strip()) == (0, ""), (
            f"{line}\n{proc.stdout}{proc.stderr}"
        )
        if args[1] == "run":
            assert "gates passed" in proc.stdout
            assert "TCR 1.000" in proc.stdout
            assert "successful completion       1" in proc.stdout
