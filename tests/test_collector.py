"""plan07.collector: the cycle collector paused around allocation-heavy work, left as found."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from plan07 import collector


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    was = gc.isenabled()
    yield
    gc.unfreeze()
    if was:
        gc.enable()
    else:
        gc.disable()


def _cycle() -> None:
    a: list[object] = []
    a.append(a)


@pytest.mark.parametrize("helper", [collector.paused, collector.isolated])
@pytest.mark.parametrize("enabled", [True, False])
def test_off_inside_and_left_as_found(helper: object, enabled: bool) -> None:
    gc.enable() if enabled else gc.disable()
    with helper():  # type: ignore[operator]
        assert not gc.isenabled()
    assert gc.isenabled() is enabled
    assert gc.get_freeze_count() == 0


def test_left_as_found_when_the_block_raises() -> None:
    gc.enable()
    for helper in (collector.paused, collector.isolated):
        with pytest.raises(KeyError), helper():
            raise KeyError("x")
        assert gc.isenabled()
        assert gc.get_freeze_count() == 0


def test_isolated_sets_the_callers_objects_aside_and_collects_its_own_cycles() -> None:
    gc.enable()
    gc.collect()
    mine: list[object] = []
    with collector.isolated():
        assert gc.get_freeze_count() > 0  # what existed before the block is set aside
        assert all(o is not mine for o in gc.get_objects())  # the test's own list among it
        for _ in range(100):
            _cycle()
    assert gc.collect() == 0  # the block's cycles were collected at its end


def test_paused_leaves_its_cycles_to_the_next_collection() -> None:
    gc.enable()
    gc.collect()
    with collector.paused():
        for _ in range(10):
            _cycle()
    assert gc.collect() == 10  # nothing lost: the next collection frees them


def test_no_pause_while_another_thread_runs() -> None:
    gc.enable()
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        for helper in (collector.paused, collector.isolated):
            with helper():
                assert gc.isenabled()
                assert gc.get_freeze_count() == 0
    finally:
        stop.set()
        t.join()


def _young() -> set[int]:
    return {id(o) for o in gc.get_objects(generation=0)}


def test_promoted_survivors_leave_the_young_generation_and_are_still_collected() -> None:
    gc.enable()
    gc.collect()
    with collector.paused(promote=True):
        kept = [[i] for i in range(1000)]  # what the block leaves alive
        for _ in range(10):
            _cycle()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    young = _young()
    assert not any(id(x) in young for x in kept)  # in the oldest generation, not rescanned
    assert gc.get_count()[0] < 50  # the young count starts again (not 1000+ pending)
    assert gc.collect() == 10  # nothing lost: a full collection still frees the cycles


def test_no_promotion_when_something_else_is_frozen() -> None:
    gc.enable()
    gc.collect()
    theirs = [[1]]
    gc.freeze()  # someone else's frozen objects stay frozen
    frozen = gc.get_freeze_count()
    with collector.paused(promote=True):
        kept = [[i] for i in range(100)]
    assert gc.get_freeze_count() == frozen
    young = _young()
    assert all(id(x) in young for x in kept)  # left as plain paused() leaves them
    assert theirs
    assert gc.isenabled()


def test_no_promotion_when_the_block_did_not_pause() -> None:
    gc.disable()
    gc.collect()
    with collector.paused(promote=True):
        kept = [[i] for i in range(100)]
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0
    young = _young()
    assert all(id(x) in young for x in kept)
