"""One exception tree: every exception checkweigh defines is a CheckweighError, drawn in
``checkweigh/errors.py``'s docstring."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import checkweigh
from checkweigh import errors
from checkweigh.errors import CheckweighError

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(checkweigh.__path__, "checkweigh.")
    # __main__ runs the CLI; the migrations' env.py runs Alembic: neither defines an exception
    if not info.name.endswith("__main__") and ".migrations" not in info.name
)

OUTSIDE = {
    "checkweigh._process.ProcessExit": "user code's os._exit(): a SystemExit, so that what "
    "catches an exit (the CLI, pytest) treats it as one",
}
"""The exceptions that stay outside the tree, each with its reason."""


def _defined() -> dict[str, type[BaseException]]:
    """Every exception class defined at the top of a checkweigh module, by its full name."""
    found = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == name
            ):
                found[f"{name}.{attr}"] = value
    return found


DEFINED = _defined()


def test_the_walk_finds_the_exceptions() -> None:
    assert len(MODULES) > 150
    assert "checkweigh.errors.InputError" in DEFINED
    assert "checkweigh.runs._session.RunStopped" in DEFINED
    assert len(DEFINED) >= 30


@pytest.mark.parametrize("name", sorted(DEFINED))
def test_every_exception_is_a_checkweigh_error(name: str) -> None:
    if name in OUTSIDE:
        assert not issubclass(DEFINED[name], CheckweighError), f"{name}: take it off OUTSIDE"
    else:
        assert issubclass(DEFINED[name], CheckweighError), f"{name} is not a CheckweighError"


def test_the_exceptions_outside_the_tree_exist() -> None:
    assert set(OUTSIDE) <= set(DEFINED)


@pytest.mark.parametrize(
    "name", sorted(n for n, e in DEFINED.items() if issubclass(e, CheckweighError))
)
def test_the_tree_in_errors_py_draws_every_exception(name: str) -> None:
    assert errors.__doc__ is not None
    assert f"{name.rpartition('.')[2]}" in errors.__doc__, f"draw {name} in errors.py"


@pytest.mark.parametrize(
    ("name", "also"),
    [
        ("checkweigh.core._rubric.RubricError", ValueError),
        ("checkweigh.suites._yaml.YamlSyntaxError", ValueError),
        ("checkweigh.judges._answers.AnswerError", ValueError),
    ],
)
def test_an_error_caught_as_a_standard_one_stays_one(name: str, also: type[Exception]) -> None:
    assert issubclass(DEFINED[name], also)
