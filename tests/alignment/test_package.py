"""The alignment package lists exactly the names it exports (it is not yet in
tests/test_exported_members.py's list)."""

from __future__ import annotations

import types

import checkweigh.alignment as package


def test_all_names_exist_and_are_public() -> None:
    exported = package.__all__
    assert len(exported) == len(set(exported))
    assert all(hasattr(package, name) for name in exported)
    public = {
        n
        for n, v in vars(package).items()
        if not n.startswith("_") and not isinstance(v, types.ModuleType) and n != "annotations"
    }
    assert public == set(exported)
