"""A run leaves the objects that existed before it out of the cyclic collector, and hands them
back when it ends, however it ends."""

from __future__ import annotations

import gc

import pytest

from checkweigh.checks import NamedCheck, check
from checkweigh.core import Case, Rubric, RubricItem
from checkweigh.runs import Evaluator, run_cases
from checkweigh.runs._gc import collector_paused, older_objects_frozen

# these drive the engine's case loop with hand-built evaluators and targets (no suite file),
# which only the deprecated run_cases() takes; they move when it is removed
pytestmark = pytest.mark.filterwarnings("ignore:checkweigh.run_cases:DeprecationWarning")


SEEN: list[int] = []


@check
def notes_frozen(case: Case) -> bool:
    SEEN.append(gc.get_freeze_count())
    return True


EVALUATOR = Evaluator(
    (NamedCheck.of("notes_frozen", notes_frozen),),
    (Rubric.build("r", [RubricItem("notes_frozen", 1.0)]),),
)


def _cases(*ids: str) -> list[Case]:
    return [Case.model_validate({"id": i}) for i in ids]


def test_older_objects_are_frozen_while_a_run_scores_and_handed_back_after() -> None:
    SEEN.clear()
    before = gc.get_freeze_count()
    run_cases(EVALUATOR, _cases("a", "b"), lambda _r: None)
    assert len(SEEN) == 2
    assert all(n > before for n in SEEN)  # the module, the suite, the test's own objects
    assert gc.get_freeze_count() == before


def test_a_run_ended_by_an_error_hands_them_back_too() -> None:
    def full_disk(_result: object) -> None:
        raise OSError("No space left on device")  # the store's write failing mid-run

    before = gc.get_freeze_count()
    with pytest.raises(OSError, match="No space"):
        run_cases(EVALUATOR, _cases("a", "b"), full_disk)
    assert gc.get_freeze_count() == before


def test_nested_runs_unfreeze_only_when_the_last_ends() -> None:
    before = gc.get_freeze_count()
    with older_objects_frozen():
        frozen = gc.get_freeze_count()
        # a frozen object that another thread frees leaves the count (a test's leftover
        # thread, an SDK's exporter): an unfreeze would empty it, not take a few
        with older_objects_frozen():
            assert gc.get_freeze_count() > frozen // 2
        assert gc.get_freeze_count() > frozen // 2  # the outer run is still going
    assert gc.get_freeze_count() == before


def test_the_collector_pause_ends_with_the_last_pause_however_it_ends() -> None:
    def paused_run() -> None:
        with collector_paused():
            assert not gc.isenabled()
            with collector_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()  # the outer pause is still going
            raise ValueError("bad line")

    assert gc.isenabled()
    with pytest.raises(ValueError, match="bad line"):
        paused_run()
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
