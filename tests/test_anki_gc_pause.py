"""The export's pause of the cyclic garbage collector (flashcards/anki/gc_pause.py)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from flashcards.anki.gc_pause import gc_paused


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_paused_inside_and_on_again_after() -> None:
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_on_again_after_an_error() -> None:
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("export failed")
    assert gc.isenabled()


def test_a_collector_switched_off_elsewhere_stays_off() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_overlapping_pauses_end_with_the_last() -> None:
    first_in, first_may_leave = threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with gc_paused():
            first_in.set()
            first_may_leave.wait(5)

    thread = threading.Thread(target=first)
    thread.start()
    assert first_in.wait(5)
    with gc_paused():
        pass
    seen.append(gc.isenabled())  # the first still holds its pause
    first_may_leave.set()
    thread.join(5)
    assert seen == [False]
    assert gc.isenabled()
