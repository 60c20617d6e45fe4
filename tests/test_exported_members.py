"""Every public package lists exactly the names it exports."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "checkweigh",
    "checkweigh.core",
    "checkweigh.checks",
    "checkweigh.suites",
    "checkweigh.runs",
    "checkweigh.store",
    "checkweigh.reports",
    "checkweigh.cli",
    "checkweigh.judges",
    "checkweigh.testing",
    "checkweigh.alignment",
    "checkweigh.service",
    "checkweigh.server",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_names_exist_and_are_public(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(exported) == len(set(exported)), "duplicate names in __all__"
    for attr in exported:
        assert hasattr(module, attr), f"{name}.__all__ lists missing {attr!r}"
    public = {
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and not isinstance(v, type(importlib)) and n != "annotations"
    }
    assert public <= set(exported) | {"Annotated", "Field"}, public - set(exported)
