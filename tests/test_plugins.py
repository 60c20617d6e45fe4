"""The registry shape every extension point shares (checkweigh.plugins)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from checkweigh.errors import InputError
from checkweigh.plugins import PluginError, Registry


def _install(root: Path, group: str, lines: dict[str, str], module: str, source: str) -> None:
    """A distribution on ``root`` (put on sys.path) declaring ``lines`` in ``group``, the way
    pip leaves an installed package: a module and its .dist-info with entry_points.txt."""
    (root / f"{module}.py").write_text(source)
    info = root / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    body = "\n".join(f"{k} = {v}" for k, v in lines.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{body}\n")


def _as_int(value: object) -> int:
    if not isinstance(value, int):
        raise TypeError(f"expected an int, got {type(value).__name__}")
    return value


def test_builtins_load_on_first_use_and_unknown_names_list_the_known_ones() -> None:
    numbers = Registry(
        "numbers", {"pi": "math:pi", "e": "math:e"}, package=__name__, label="number"
    )
    assert numbers.builtin_names() == ("pi", "e")
    assert numbers.group == "checkweigh.numbers"
    assert round(numbers.get("pi"), 5) == 3.14159
    with pytest.raises(InputError) as err:
        numbers.get("tau", field="constant", file="suite.yaml", line=3)
    assert str(err.value).startswith("suite.yaml:3: constant: unknown number 'tau'; expected")
    assert "pi, e" in str(err.value)
    assert "checkweigh.numbers" in str(err.value)


def test_entries_added_for_one_caller_leave_the_table_unchanged() -> None:
    base = Registry("numbers", {"pi": "math:pi"}, package=__name__, label="number")
    mine = base.with_entries({"answer": 42})
    assert mine.get("answer") == 42
    assert "answer" in mine
    assert "answer" not in base
    with pytest.raises(PluginError, match="'pi' already exists"):
        base.with_entries({"pi": 3})


def test_a_plugin_arrives_through_its_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(
        tmp_path,
        "checkweigh.numbers",
        {"seven": "cw_numbers:SEVEN", "word": "cw_numbers:WORD", "gone": "cw_numbers:NOPE"},
        "cw_numbers",
        "SEVEN = 7\nWORD = 'seven'\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    numbers = Registry(
        "numbers", {"one": "builtins:True"}, package=__name__, label="number", accept=_as_int
    )
    assert "cw_numbers" not in sys.modules  # listing the built-ins reads no plugin
    assert numbers.builtin_names() == ("one",)
    assert numbers.get("seven") == 7
    assert numbers.names() == ("one", "seven", "word", "gone")
    with pytest.raises(PluginError, match=r"'word' \(entry point word = cw_numbers:WORD of "):
        numbers.get("word")
    with pytest.raises(PluginError, match="failed to load: AttributeError"):
        numbers.get("gone")


def test_a_plugin_may_not_shadow_a_builtin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install(tmp_path, "checkweigh.numbers", {"pi": "cw_pi:PI"}, "cw_pi", "PI = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    numbers = Registry("numbers", {"pi": "math:pi"}, package=__name__, label="number")
    with pytest.raises(PluginError, match="claims the name of the built-in number 'pi'"):
        numbers.names()


def test_origin_names_the_table_or_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, "checkweigh.numbers", {"nine": "cw_nine:NINE"}, "cw_nine", "NINE = 9\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    numbers = Registry("numbers", {"pi": "math:pi"}, package=__name__, label="number")
    mine = numbers.with_entries({"answer": 42})
    assert [mine.origin(n) for n in mine.names()] == [
        "built-in",
        "given",
        "cw_nine 1.0: cw_nine:NINE",
    ]
    assert "cw_nine" not in sys.modules  # telling where an entry comes from imports none
    with pytest.raises(InputError, match="unknown number 'tau'"):
        numbers.origin("tau")


def test_a_plugin_whose_folder_left_the_path_is_unknown_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, "checkweigh.numbers", {"nine": "cw_nine:NINE"}, "cw_nine", "NINE = 9\n")
    numbers = Registry("numbers", {"pi": "math:pi"}, package=__name__, label="number")
    with monkeypatch.context() as inside:
        inside.syspath_prepend(str(tmp_path))
        assert numbers.get("nine") == 9
    with pytest.raises(InputError, match="unknown number 'nine'"):
        numbers.get("nine")
