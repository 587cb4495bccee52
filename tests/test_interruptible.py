"""Waits in the main thread that a signal handed to another thread still cuts short
(``bitexact.interruptible``), and that otherwise answer as the waits they replace."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from bitexact.interruptible import acquire, wait_event, wait_for
from main_thread_signal import Signalled, signal_elsewhere, usr1_raises


@pytest.fixture(autouse=True)
def _usr1() -> Iterator[None]:
    with usr1_raises():
        yield


def test_a_condition_wait_in_the_main_thread_runs_a_handler_another_thread_received() -> None:
    cond = threading.Condition()
    done = threading.Event()

    def finish() -> None:
        with cond:
            done.set()
            cond.notify_all()

    armed, gave_up = signal_elsewhere(20, finish)
    with pytest.raises(Signalled), cond:
        armed.set()
        wait_for(cond, done.is_set, 60)
    assert not gave_up.is_set(), "the handler ran only once the wait had ended"


def test_an_event_wait_in_the_main_thread_runs_a_handler_another_thread_received() -> None:
    event = threading.Event()
    armed, gave_up = signal_elsewhere(20, event.set)
    with pytest.raises(Signalled):
        armed.set()
        wait_event(event, 60)
    assert not gave_up.is_set(), "the handler ran only once the wait had ended"


@pytest.mark.parametrize("timeout", [60.0, None])
def test_a_lock_wait_in_the_main_thread_runs_a_handler_another_thread_received(timeout: float | None) -> None:
    lock = threading.Lock()
    lock.acquire()
    armed, gave_up = signal_elsewhere(20, lock.release)
    with pytest.raises(Signalled):
        armed.set()
        acquire(lock, timeout)
    assert not gave_up.is_set(), "the handler ran only once the wait had ended"


def test_the_waits_answer_as_the_waits_they_replace() -> None:
    cond, event, lock = threading.Condition(), threading.Event(), threading.Lock()
    with cond:
        assert wait_for(cond, lambda: False, 0.12) is False
        assert wait_for(cond, lambda: True, 0) is True
        assert wait_for(cond, lambda: 1, None) is True
    assert wait_event(event, 0.12) is False
    threading.Timer(0.05, event.set).start()
    assert wait_event(event, 30) is True and wait_event(event, None) is True
    assert acquire(lock, 0) is True and acquire(lock, 0.12) is False and acquire(lock, 0) is False
    threading.Timer(0.05, lock.release).start()
    assert acquire(lock, 30) is True
    answers: list[bool] = []

    def elsewhere() -> None:  # not the main thread: the library's own wait
        with cond:
            answers.append(wait_for(cond, lambda: False, 0.05))
        answers.append(wait_event(threading.Event(), 0.05))
        answers.append(acquire(lock, 0.05))

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join(30)
    assert answers == [False, False, False]


def test_a_nan_timeout_waits_no_time_in_the_main_thread_too() -> None:
    """max(nan, 0.0) is nan: the sliced main-thread wait never reached its deadline and spun for ever.
    Off the main thread a NaN is a zero wait (the waits take max(0.0, nan), 0.0); so it is here."""
    event, lock = threading.Event(), threading.Lock()
    lock.acquire()
    condition = threading.Condition()
    with condition:
        assert wait_for(condition, lambda: False, float("nan")) is False
    assert wait_event(event, float("nan")) is False
    assert acquire(lock, float("nan")) is False
