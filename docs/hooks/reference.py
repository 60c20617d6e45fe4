"""MkDocs hook: the reference pages generated from the code as the site is built.

A page asks for a generated block with an HTML comment on a line of its own:

- ``<!-- generated: readme -->``: the README, so that the site's home page is the front door;
- ``<!-- generated: cli -->``: every ``checkweigh`` command, its usage, arguments and options,
  read from the typer app (the same objects ``checkweigh CMD --help`` prints);
- ``<!-- generated: checks -->``: every built-in check type, its docstring and its fields;
- ``<!-- generated: schema KIND -->``: what ``checkweigh schema KIND`` prints (``case``,
  ``suite``, ``run-config``, ``result``), its top-level fields as a table, then the whole schema.

The rendered pages also get the docstrings' reStructuredText roles (``:class:`X```) shown as
code. Nothing is written to ``docs/``: a page in the repository never goes stale, and a command or a
field that has no help text shows up as such in the built page.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path
from typing import Any

_MARKER = re.compile(r"^<!-- generated: (\w+)(?: ([\w-]+))? -->$", re.M)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace each ``<!-- generated: ... -->`` line of a page with what it names."""
    return _MARKER.sub(lambda m: _render(m.group(1), m.group(2)), markdown)


# The docstrings cross-reference in reStructuredText (:class:`~checkweigh.core.Case`), which
# mkdocstrings' Google parser leaves as text: show the name as code, as Sphinx would.
_ROLE = re.compile(r":(?:class|meth|func|attr|mod|data|exc|obj):<code>~?([\w.]+?)(\(\))?</code>")


def on_page_content(html: str, **_: Any) -> str:
    """Turn the docstrings' reStructuredText roles into plain code names."""
    return _ROLE.sub(
        lambda m: f"<code>{_short(m.group(0), m.group(1))}{m.group(2) or ''}</code>", html
    )


def _short(role: str, name: str) -> str:
    return name.rsplit(".", 1)[-1] if "~" in role else name


def _render(kind: str, arg: str | None) -> str:
    if kind == "readme":
        return _readme()
    if kind == "cli":
        return _cli()
    if kind == "checks":
        return _check_types()
    if kind == "schema" and arg:
        return _schema(arg)
    raise ValueError(f"unknown generated block {kind!r} {arg!r}")


_DOCS = Path(__file__).resolve().parents[1]
_LINK = re.compile(r"\[([^\]]+)\]\(([^)#]*)(#[^)]*)?\)")


def _readme() -> str:
    """The README as the site's home page: its links into docs/ made relative to the site,
    and a link to any other file of the repository shown as the file's name."""
    text = (_DOCS.parent / "README.md").read_text(encoding="utf-8")
    return _LINK.sub(_relink, text.split("\n", 1)[1])  # the page gives its own title


def _relink(match: re.Match[str]) -> str:
    label, target, anchor = match.group(1), match.group(2), match.group(3) or ""
    if target.startswith(("http://", "https://")):
        return match.group(0)
    if target.startswith("docs/") and (_DOCS / target.removeprefix("docs/")).is_file():
        return f"[{label}]({target.removeprefix('docs/')}{anchor})"
    if not target and anchor:
        return match.group(0)
    return label if label.startswith("`") else f"{label} (`{target}`)"


def _root() -> tuple[Any, Any]:
    # typer carries its own copy of click: its objects are read by duck typing, not isinstance
    import typer.main

    from checkweigh.cli import app

    command = typer.main.get_command(app)
    return command, command.context_class(command, info_name="checkweigh")


def _cli() -> str:
    group, ctx = _root()
    parts: list[str] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = command.context_class(command, info_name=name, parent=ctx)
        parts.append(_command(name, command, sub))
    return "\n".join(parts)


def _command(name: str, command: Any, ctx: Any) -> str:
    usage = " ".join(["checkweigh", name, *command.collect_usage_pieces(ctx)])
    lines = [f"## `checkweigh {name}`", "", "```text", usage, "```", ""]
    lines += [_text(command.help or ""), ""]
    # each row is what --help prints for that parameter: its name and metavar, then its help
    # with the default, the range and the environment variable typer appends
    rows = [p.get_help_record(ctx) for p in command.params if not p.hidden]
    rows = [row for row in rows if row is not None]
    if rows:
        lines += ["| argument or option | meaning |", "| --- | --- |"]
        lines += [f"| `{_cell(decl)}` | {_cell(meaning)} |" for decl, meaning in rows]
        lines.append("")
    return "\n".join(lines)


def _text(text: str) -> str:
    # typer's help is plain text; the form feed marks the end of what --help shows
    return text.split("\f")[0].strip()


def _cell(text: str) -> str:
    return " ".join(_text(text).split()).replace("|", "\\|")


def _schema(kind: str) -> str:
    from typer.testing import CliRunner

    from checkweigh.cli import app

    result = CliRunner().invoke(app, ["schema", kind])
    if result.exit_code != 0:
        raise RuntimeError(f"checkweigh schema {kind} exited {result.exit_code}: {result.output}")
    schema = json.loads(result.output)
    lines = [_text(schema.get("description", "")), "", *_fields(kind, schema), ""]
    for name, spec in schema.get("$defs", {}).items():
        # explicit ids: the four schemas share definition names (a Step is in two of them)
        lines += [f"### {kind}: `{name}` {{#{kind}-{name.lower()}}}", ""]
        lines += [_text(spec.get("description", "")), "", *_fields(kind, spec), ""]
    body = json.dumps(schema, indent=2, ensure_ascii=False)
    lines += [
        f'??? note "The whole schema (`checkweigh schema {kind}`)"',
        "",
        "    ```json",
        *("    " + line for line in body.splitlines()),
        "    ```",
        "",
    ]
    return "\n".join(lines)


def _fields(kind: str, spec: dict[str, Any]) -> list[str]:
    properties = spec.get("properties", {})
    if not properties:
        return [f"Type: {_type(kind, spec)}."]
    required = set(spec.get("required", []))
    lines = ["| field | type | required | meaning |", "| --- | --- | --- | --- |"]
    for field, sub in properties.items():
        mark = "yes" if field in required else ""
        meaning = _cell(sub.get("description", ""))
        if "default" in sub and sub["default"] is not None:
            meaning = f"{meaning} Default: `{json.dumps(sub['default'])}`.".strip()
        lines.append(f"| `{field}` | {_type(kind, sub)} | {mark} | {meaning} |")
    return lines


def _check_types() -> str:
    """Every built-in check type: its docstring, then its fields from its model."""
    from checkweigh.suites import CHECK_TYPES

    lines: list[str] = []
    for name in CHECK_TYPES.builtin_names():
        model = CHECK_TYPES.get(name)
        schema = model.model_json_schema()
        schema["properties"] = {
            k: v for k, v in schema.get("properties", {}).items() if k != "type"
        }
        lines += [f"## `{name}`", "", f"`{_public(model)}`", ""]
        lines += [inspect.cleandoc(model.__doc__ or ""), "", *_fields("", schema), ""]
    return "\n".join(lines)


def _public(cls: type) -> str:
    """The name a class is exported under (its package's), else where it is defined."""
    package = cls.__module__.split("._", 1)[0]
    exported = getattr(importlib.import_module(package), cls.__qualname__, None) is cls
    return f"{package if exported else cls.__module__}.{cls.__qualname__}"


def _type(kind: str, spec: dict[str, Any]) -> str:
    if "const" in spec:
        return f"`{json.dumps(spec['const'])}`"
    if "enum" in spec:
        return " or ".join(f"`{json.dumps(v)}`" for v in spec["enum"])
    if "$ref" in spec:
        name = spec["$ref"].rsplit("/", 1)[-1]
        return f"[`{name}`](#{kind}-{name.lower()})" if kind else f"`{name}`"
    if "type" in spec:
        of = spec["type"]
        if of == "array" and isinstance(spec.get("items"), dict):
            return f"list of {_type(kind, spec['items'])}"
        if of == "object" and isinstance(spec.get("additionalProperties"), dict):
            return f"map of {_type(kind, spec['additionalProperties'])}"
        return f"`{of}`" if isinstance(of, str) else " or ".join(f"`{k}`" for k in of)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in spec:
            return " or ".join(_type(kind, s) for s in spec[key])
    return "any"
