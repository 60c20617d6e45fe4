"""What the routes share: the store and the run a path names."""

from __future__ import annotations

from starlette.requests import Request

from ..errors import InputError
from ..store import RunInfo, Store
from ._errors import ApiError, from_input_error


def store_of(request: Request) -> Store:
    """The app's store."""
    store: Store = request.app.state.store
    return store


def run_of(store: Store, ref: str) -> RunInfo:
    """The run ``ref`` names (id, unique prefix, latest, previous); 404 when there is none."""
    try:
        return store.get_run(ref)
    except InputError as exc:
        raise from_input_error(exc) from None


def finished(info: RunInfo) -> RunInfo:
    """``info``, or 409 when its run is still running (nothing stable to show yet)."""
    if info.summary is None:
        raise ApiError(409, f"run {info.id} is still {info.status.value}")
    return info
