"""Test-wide fixtures: a network guard (any non-loopback connection fails the test), an
isolated working folder, and clean-up of modules imported from a test's folder."""

from __future__ import annotations

import importlib
import ipaddress
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


class NetworkBlocked(AssertionError):
    """A test tried to reach beyond this machine."""


def _is_loopback(host: Any) -> bool:
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _check(address: Any) -> None:
    if isinstance(address, tuple) and address and not _is_loopback(address[0]):
        raise NetworkBlocked(f"tests may only connect to loopback, not {address!r}")


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> Any:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check(address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if not _is_loopback(host):
        raise NetworkBlocked(f"tests may not resolve non-loopback host {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)
    return


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No test reads the developer's database or cache settings."""
    monkeypatch.delenv("CHECKWEIGH_DB", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def fresh_modules(tmp_path: Path) -> Iterator[None]:
    """Forget the modules a test imported from its tmp_path, so names never leak."""
    importlib.invalidate_caches()
    yield
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if origin and Path(origin).is_relative_to(tmp_path):
            del sys.modules[name]


@pytest.fixture(scope="session")
def example_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example plugin package pip-installed into a folder of its own (see
    tests/support/plugin.py); put it on the path with :func:`use_plugin`."""
    from support.plugin import install

    return install(tmp_path_factory.mktemp("site"))


@pytest.fixture
def use_plugin(example_plugin: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example plugin importable here and in ``checkweigh`` subprocesses (registries read
    the entry points again when ``sys.path`` changed)."""
    monkeypatch.syspath_prepend(str(example_plugin))
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv(
        "PYTHONPATH", f"{example_plugin}{os.pathsep}{path}" if path else str(example_plugin)
    )
    importlib.invalidate_caches()
    return example_plugin
