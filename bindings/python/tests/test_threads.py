"""Threads hammering one limiter admit exactly the quota: the engine is lock-free, and the
binding adds no state of its own. Run with the GIL held during checks (the default) and
released (then the engine's atomics really race, on every core)."""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator

import pytest

from sluicegate import KeyedLimiter, Limiter, ManualClock, _native

ALGORITHMS = ["gcra", "token-bucket", "leaky-bucket", "fixed-window", "sliding-window",
              "sliding-log"]
THREADS = 8
# What "1000/minute burst 700" admits at one instant, from the quota's definition (not from
# the limiter under test): the rate algorithms hold the burst, the windows admit the limit.
CAPACITY = {"gcra": 700, "token-bucket": 700, "leaky-bucket": 700, "fixed-window": 1000,
            "sliding-window": 1000, "sliding-log": 1000}


@pytest.fixture(params=[False, True], ids=["gil-held", "gil-released"])
def release_gil(request: pytest.FixtureRequest) -> Iterator[bool]:
    before = _native._release_gil_during_checks(request.param)
    try:
        yield request.param
    finally:
        _native._release_gil_during_checks(before)


def hammer(attempt: Callable[[int, int], bool], attempts: int) -> list[int]:
    """Runs `attempt(thread, n)` `attempts` times on each of THREADS threads started
    together; returns how many each thread saw admitted."""
    start = threading.Barrier(THREADS)
    admitted = [0] * THREADS
    errors: list[BaseException] = []

    def run(thread: int) -> None:
        try:
            start.wait()
            admitted[thread] = sum(attempt(thread, n) for n in range(attempts))
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    workers = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors, errors
    return admitted


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_threads_on_one_limiter_admit_exactly_the_quota(algorithm: str, release_gil: bool) -> None:
    # The clock does not move: whatever the interleaving, exactly the capacity is admitted.
    limiter = Limiter("1000/minute burst 700", algorithm=algorithm, clock=ManualClock())
    admitted = hammer(lambda thread, n: bool(limiter.check()), attempts=500)
    assert sum(admitted) == CAPACITY[algorithm]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_threads_on_one_keyed_limiter_admit_exactly_the_quota_per_key(
    algorithm: str, release_gil: bool
) -> None:
    limiter = KeyedLimiter("300/minute", algorithm=algorithm, clock=ManualClock())
    keys = [f"user:{n}" for n in range(4)]
    per_key = [0] * len(keys)
    lock = threading.Lock()

    def attempt(thread: int, n: int) -> bool:
        key = (thread + n) % len(keys)
        allowed = bool(limiter.check(keys[key], cost=1 + n % 2))
        if allowed:
            with lock:
                per_key[key] += 1 + n % 2
        return allowed

    hammer(attempt, attempts=600)
    # Costs of 1 and 2 interleave; cost-1 requests keep coming after each key is full, so
    # every key ends exactly at its limit.
    assert per_key == [300] * len(keys)
    assert len(limiter) == len(keys)


def test_the_gil_switch_says_what_it_was() -> None:
    assert _native._release_gil_during_checks(True) is False
    assert _native._release_gil_during_checks(False) is True


def test_threads_sharing_one_clock_and_many_limiters(release_gil: bool) -> None:
    clock = ManualClock()
    limiters: list[Any] = [Limiter("50/second", algorithm=a, clock=clock) for a in ALGORITHMS]
    admitted = hammer(lambda thread, n: bool(limiters[(thread + n) % len(limiters)].check()),
                      attempts=120)
    assert sum(admitted) == 50 * len(ALGORITHMS)
