"""Suites and cases files parsed once per test session, for parametrized tests over many
cases."""

from __future__ import annotations

from pathlib import Path

from ..core import Case
from ..suites import CasesSource, Suite, load_suite


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (-1, -1)  # loading will say what is wrong
    return (st.st_mtime_ns, st.st_size)


class SuiteCache:
    """Suites and cases files parsed once per test session, and again only when a file
    changes. The ``checkweigh`` fixture keeps one per session, so parametrized tests over many
    cases do not parse the same files for every test."""

    def __init__(self) -> None:
        self._suites: dict[Path, tuple[tuple[int, int], Suite]] = {}
        self._cases: dict[tuple[Path, str], tuple[tuple[int, int], dict[str, Case]]] = {}

    def suite(self, path: Path) -> Suite:
        """The suite file at ``path``, loaded (see :func:`~checkweigh.suites.load_suite`)."""
        __tracebackhide__ = True
        key, stamp = path.resolve(), _stamp(path)
        hit = self._suites.get(key)
        if hit is None or hit[0] != stamp:
            hit = (stamp, load_suite(path))
            self._suites[key] = hit
        return hit[1]

    def cases(self, source: Path | CasesSource) -> dict[str, Case]:
        """The cases of a cases file (or of logs read through an importer), by id, in file
        order."""
        if isinstance(source, Path):
            source = CasesSource(source)
        path = source.path
        key = (path.resolve(), repr((source.format, source.on_bad_record, source.mapping)))
        stamp = _stamp(path)
        hit = self._cases.get(key)
        if hit is None or hit[0] != stamp:
            hit = (stamp, {c.id: c for c in source.iter_cases()})
            self._cases[key] = hit
        return hit[1]
