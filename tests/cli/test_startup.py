"""What `checkweigh` imports to start: `--help`, each command's `--help` and a run without a
judge load only what they use (speed itself is measured by benchmarks/bench_startup.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from checkweigh.testing import Reply, fake_llm_server
from support.judge_suite import KEY, YES, judge_suite
from support.recorded_suite import standard_cases, write_suite

# Runs the real command line in a fresh interpreter, then lists every module it imported.
PROBE = """\
import json, sys
from checkweigh.cli._app import _main
sys.argv = ["checkweigh", *sys.argv[2:]]
code = _main()
with open(OUT, "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""

SDKS = ("openai", "anthropic", "httpx", "aiohttp")
HEAVY = (
    *SDKS,
    "sqlalchemy",
    "alembic",
    "mako",
    "jsonschema",
    "yaml",
    "tenacity",
    "psycopg",
    "numpy",
    "scipy",
    "matplotlib",
    "jinja2",
    "fastapi",
    "starlette",
    "uvicorn",
    "ray",
)
"""Never imported to print help."""

HELP_MODULES = {
    "checkweigh",
    "checkweigh._lazy",
    "checkweigh._process",
    "checkweigh._text",  # the text boundary _process uses: the standard library only
    "checkweigh.errors",
    "checkweigh.importers",
    "checkweigh.importers._formats",  # the built-in formats' names, for `import --help`
    "checkweigh.core",
    "checkweigh.core._stability_defaults",
    "checkweigh.core._thresholds",
    "checkweigh.reports",
    "checkweigh.reports._safe",
    "checkweigh.server",
    "checkweigh.server._host",
    "checkweigh.suites",
    "checkweigh.suites._text",
}
"""The checkweigh modules outside ``checkweigh.cli`` that the command line needs to declare its
commands: a package's ``__init__`` and small leaf modules. Anything else (the store, the
engine, the models) belongs inside the command that uses it."""

COMMANDS = [
    "run",
    "runs",
    "show",
    "compare",
    "import",
    "schema",
    "serve",
    "stability",
    "align",
    "plugins",
]


def _modules(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, set[str]]:
    out = cwd / "modules.json"
    code = PROBE.replace("OUT", repr(str(out)))
    done = subprocess.run(
        [sys.executable, "-c", code, "checkweigh", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    return data["code"], set(data["modules"])


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in modules)


def test_help_imports_no_store_engine_sdk_or_server(tmp_path: Path) -> None:
    code, modules = _modules(["--help"], tmp_path)
    assert code == 0
    assert _loaded(modules, HEAVY) == []
    assert "pydantic" not in modules
    ours = {m for m in modules if m.startswith("checkweigh") and not m.startswith("checkweigh.cli")}
    assert ours <= HELP_MODULES, f"move these imports into the commands: {ours - HELP_MODULES}"


@pytest.mark.parametrize("command", COMMANDS)
def test_each_commands_help_imports_nothing_heavy(tmp_path: Path, command: str) -> None:
    code, modules = _modules([command, "--help"], tmp_path)
    assert code == 0
    assert _loaded(modules, HEAVY) == []
    ours = {m for m in modules if m.startswith("checkweigh") and not m.startswith("checkweigh.cli")}
    assert ours <= HELP_MODULES, f"move these imports into the commands: {ours - HELP_MODULES}"


def test_import_checkweigh_loads_only_the_package_and_its_errors() -> None:
    code = "import sys, checkweigh; print(sorted(m for m in sys.modules if 'checkweigh' in m))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['checkweigh', 'checkweigh._lazy', 'checkweigh.errors']"
    # a public name still imports as before, and loads what it needs on first use
    code = "from checkweigh import Store, Rubric; import sys; print('sqlalchemy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


def test_a_run_without_a_judge_imports_no_sdk_and_alembic_only_to_migrate(
    tmp_path: Path,
) -> None:
    suite = write_suite(tmp_path / "suite", standard_cases())
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    # a new database: the schema is made from the models, stamped at the newest revision
    code, modules = _modules(["run", str(suite), "--db", db, "-q"], tmp_path)
    assert code == 0
    assert _loaded(modules, (*SDKS, "alembic")) == []
    # the database is at the newest revision now: opening it again reads the revision only
    code, modules = _modules(["run", str(suite), "--db", db, "-q"], tmp_path)
    assert code == 0
    assert _loaded(modules, HEAVY) == ["sqlalchemy", "yaml"]


def test_a_judged_run_imports_the_sdk_of_its_provider_only(tmp_path: Path) -> None:
    # the probe sees an SDK when one is used: the run above is not SDK-free by accident
    suite = judge_suite(tmp_path / "suite")
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    with fake_llm_server([], default=Reply(YES)) as server:
        env = {
            "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": server.base_url,
            "CHECKWEIGH_CACHE_DIR": str(tmp_path / "cache"),
        }
        args = ["run", str(suite), "--db", db, "-q", "--judge", "openai:gpt-test"]
        code, modules = _modules(args, tmp_path, env)
    assert code == 0
    assert "openai" in modules
    assert "anthropic" not in modules
