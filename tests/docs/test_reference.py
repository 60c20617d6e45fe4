"""The reference pages generated when the site is built (docs/hooks/reference.py): every
command and option of the real CLI, every field of the real schemas, the README as the home
page. `make docs-build` builds them strictly; these check what they say."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
import typer.main
from typer.testing import CliRunner

from checkweigh.cli import app

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hook", ROOT / "docs/hooks/reference.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_hook"] = module  # dataclasses and typing look modules up by name
    spec.loader.exec_module(module)
    return module


def test_the_cli_page_has_every_command_and_option(hook: ModuleType) -> None:
    page = hook.on_page_markdown("# CLI\n\n<!-- generated: cli -->\n")
    group = typer.main.get_command(app)
    ctx = group.context_class(group, info_name="checkweigh")
    names = group.list_commands(ctx)
    assert {"run", "compare", "import", "schema", "serve"} <= set(names)
    assert re.findall(r"^## `checkweigh (\S+)`", page, re.M) == names
    for name in names:
        section = page.split(f"## `checkweigh {name}`", 1)[1].split("\n## ", 1)[0]
        for param in group.get_command(ctx, name).params:
            if param.param_type_name == "option" and not param.hidden:
                assert all(opt in section for opt in param.opts), (name, param.opts)
    assert "--judge-concurrency" in page
    assert "[env: CHECKWEIGH_DB]" in page


@pytest.mark.parametrize("kind", ["suite", "case", "run-config", "result"])
def test_a_schema_page_has_every_field_and_definition(hook: ModuleType, kind: str) -> None:
    schema = json.loads(CliRunner().invoke(app, ["schema", kind]).output)
    page = hook.on_page_markdown(f"<!-- generated: schema {kind} -->\n")
    for field in schema["properties"]:
        assert re.search(rf"^\| `{re.escape(field)}` \|", page, re.M), field
    for name in schema.get("$defs", {}):
        assert f"### {kind}: `{name}` {{#{kind}-{name.lower()}}}" in page
    for target in re.findall(rf"\]\(#({kind}-[\w-]+)\)", page):
        assert f"{{#{target}}}" in page, target  # every type link has its heading


def test_the_home_page_is_the_readme_with_site_links(hook: ModuleType) -> None:
    page = hook.on_page_markdown("# checkweigh\n\n<!-- generated: readme -->\n")
    assert "## Exit codes" in page
    assert "## Why yes/no checks" in page
    assert "](docs/" not in page
    assert "[Tutorial](tutorial.md)" in page
    assert "[CLI](reference/cli.md)" in page
    assert "changes (`CHANGELOG.md`)" in page


def test_restructuredtext_roles_become_code(hook: ModuleType) -> None:
    html = "<p>See :class:<code>~checkweigh.core.Case</code> and :func:<code>load()</code>.</p>"
    assert hook.on_page_content(html) == "<p>See <code>Case</code> and <code>load()</code>.</p>"


def test_the_check_types_page_has_every_built_in_type_and_field(hook: ModuleType) -> None:
    from checkweigh.suites import CHECK_TYPES

    page = hook.on_page_markdown("<!-- generated: checks -->\n")
    names = CHECK_TYPES.builtin_names()
    assert {"equals", "trajectory_match", "python", "judge", "graded"} <= set(names)
    assert re.findall(r"^## `(\w+)`$", page, re.M) == list(names)
    for name in names:
        section = page.split(f"## `{name}`\n", 1)[1].split("\n## ", 1)[0]
        for field in CHECK_TYPES.get(name).model_fields:
            if field != "type":
                assert f"| `{field}` |" in section, (name, field)
