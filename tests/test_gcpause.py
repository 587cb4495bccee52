"""The garbage-collector pause nests, and restores the collector only as it found it."""

from __future__ import annotations

import gc
import threading

from bitexact.gcpause import gc_paused


def test_nested_pauses_restore_the_collector_once_the_last_ends() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_concurrent_pauses_from_threads() -> None:
    inside = threading.Barrier(2)
    release = threading.Event()

    def hold() -> None:
        with gc_paused():
            inside.wait()
            release.wait(5)

    thread = threading.Thread(target=hold)
    thread.start()
    with gc_paused():
        inside.wait()
    assert not gc.isenabled(), "the other thread's pass is still running"
    release.set()
    thread.join()
    assert gc.isenabled()


def test_an_exception_still_restores_the_collector() -> None:
    try:
        with gc_paused():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()
