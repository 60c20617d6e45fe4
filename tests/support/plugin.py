"""The example plugin package (tests/plugins/checkweigh-example-plugin) installed the way a
user installs one, with pip, into a folder of its own: tests put that folder on ``sys.path``
(and ``PYTHONPATH`` for a ``checkweigh`` subprocess) to use the plugin, and nothing of it
leaks into the virtualenv or another test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "plugins" / "checkweigh-example-plugin"
MODULE = "checkweigh_example_plugin"


def install(into: Path) -> Path:
    """``pip install`` the example plugin into ``into`` (no index, no dependencies: checkweigh
    is already installed) and return it, the folder to put on the path."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(into),
            str(SOURCE),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return into
