"""Every option's help reaches the terminal whole: rich reads ``[word]`` as markup and drops
it, so a default written ``[suite: 75]`` or an extra ``checkweigh[ray]`` must be escaped."""

from __future__ import annotations

import re
from typing import Any

import typer
from typer.testing import CliRunner

from checkweigh.cli import app

# what rich's markup takes for a tag: "[" then a letter, "/", "@" or "#" (unless escaped)
_TAG = re.compile(r"(?<!\\)\[(?=[A-Za-z/@#])")


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += _commands(sub, (*path, name))
    return found


def test_no_help_text_holds_a_bracket_rich_would_eat() -> None:
    eaten = [
        f"{' '.join(path) or 'checkweigh'} {param.name}: {help!r}"
        for path, command in _commands(typer.main.get_command(app))
        for param in command.params
        if (help := getattr(param, "help", None)) and _TAG.search(help)
    ]
    assert eaten == []
    assert sum(len(command.params) for _, command in _commands(typer.main.get_command(app))) > 50


def test_the_defaults_in_brackets_are_shown() -> None:
    result = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0
    for shown in ("[suite: 75]", "needs checkweigh[ray])", "[env: CHECKWEIGH_DB]", "[auto]"):
        assert shown in result.stdout
