"""Pausing the garbage collector around bulk reads: nested and overlapping pauses (the
server's worker threads) leave it as they found it."""

from __future__ import annotations

import gc
import threading

from checkweigh._gc import gc_paused


def test_pauses_nest_and_the_collector_comes_back() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer read is still going
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_pauses_in_threads_end_with_the_collector_on() -> None:
    inside = threading.Barrier(2)
    first_done = threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with gc_paused():
            inside.wait()
        first_done.set()

    def second() -> None:
        with gc_paused():
            inside.wait()
            first_done.wait()
            seen.append(gc.isenabled())  # the first ended: still paused for this one

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == [False]
    assert gc.isenabled()


def test_an_error_in_the_block_still_restores_the_collector() -> None:
    try:
        with gc_paused():
            raise LookupError("no such run")
    except LookupError:
        pass
    assert gc.isenabled()
