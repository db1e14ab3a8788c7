"""Limiter, KeyedLimiter, ManualClock and Decision as DESIGN.md §2 writes them: defaults,
units, every number, peek and hit, a clock shared between limiters, len and max_keys."""

from __future__ import annotations

import pytest

import sluicegate
from sluicegate import Decision, KeyedLimiter, Limiter, ManualClock

ALGORITHMS = ["gcra", "token-bucket", "leaky-bucket", "fixed-window", "sliding-window",
              "sliding-log"]


def test_the_package_exports_the_contracts_names() -> None:
    for name in ("Limiter", "KeyedLimiter", "ManualClock", "Decision", "RedisLimiter",
                 "RedisError"):
        assert hasattr(sluicegate, name), name
    assert issubclass(sluicegate.RedisError, ConnectionError)


def test_the_algorithm_defaults_to_gcra_as_in_rust() -> None:
    assert Limiter("1000/second").algorithm == "gcra"
    assert KeyedLimiter("1000/second").algorithm == "gcra"


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_runs_by_its_name(algorithm: str) -> None:
    clock = ManualClock()
    for limiter in (Limiter("5/second", algorithm=algorithm, clock=clock),
                    KeyedLimiter("5/second", algorithm=algorithm, clock=clock)):
        assert limiter.algorithm == algorithm
        assert limiter.quota == "5/second"
        assert limiter.max_cost == 5
        key = ("a",) if isinstance(limiter, KeyedLimiter) else ()
        admitted = [limiter.check(*key) for _ in range(5)]
        assert all(admitted)
        assert not limiter.check(*key)
    assert Limiter("5/s", algorithm="Sliding_Window").algorithm == "sliding-window"


def test_a_decision_carries_every_number_in_seconds() -> None:
    clock = ManualClock()
    limiter = Limiter("2/minute", algorithm="fixed-window", clock=clock)
    clock.advance(15)
    first = limiter.check()
    assert isinstance(first, Decision)
    assert first.allowed is True and bool(first) is True
    assert (first.limit, first.remaining) == (2, 1)
    assert first.retry_after is None
    assert first.reset_after == 45.0 and first.wait == 0.0
    assert first.table_full is False
    assert limiter.check().remaining == 0
    denied = limiter.check()
    assert denied.allowed is False and bool(denied) is False
    assert denied.retry_after == 45.0  # the window resets at 1:00
    assert isinstance(denied.retry_after, float) and isinstance(denied.reset_after, float)
    assert repr(denied) == ("Decision(allowed=False, limit=2, remaining=0, retry_after=45.0, "
                            "reset_after=45.0, wait=0.0)")


def test_a_decision_is_read_only() -> None:
    decision = Limiter("1/second").check()
    with pytest.raises(AttributeError):
        decision.allowed = False  # type: ignore[misc]


def test_the_leaky_bucket_tells_an_admitted_request_how_long_to_wait() -> None:
    limiter = Limiter("2/second", algorithm="leaky-bucket", clock=ManualClock())
    assert limiter.check().wait == 0.0
    second = limiter.check()
    assert second.allowed and second.wait == 0.5
    third = limiter.check()
    assert not third.allowed and third.wait == 0.0 and third.retry_after == 0.5


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_peek_consumes_nothing_and_hit_records_whatever_the_answer(algorithm: str) -> None:
    clock = ManualClock()
    limiter = KeyedLimiter("3/second", algorithm=algorithm, clock=clock)
    for _ in range(10):
        assert limiter.peek("a", cost=3).allowed
    over = limiter.hit("a", 4)  # more than the limit: recorded, and said to be over
    assert not over.allowed
    assert not limiter.check("a")
    assert limiter.check("b")  # another key is untouched
    one = Limiter("3/second", algorithm=algorithm, clock=clock)
    assert one.hit(2).allowed and one.hit().allowed
    assert not one.peek()


def test_clones_of_one_manual_clock_drive_every_limiter_given_it() -> None:
    clock = ManualClock()
    assert clock.now == 0.0
    one = Limiter("1/second", clock=clock)
    keyed = KeyedLimiter("1/second", algorithm="sliding-log", clock=clock)
    assert one.check() and keyed.check("a")
    assert not one.check() and not keyed.check("a")
    clock.advance(0.25)
    assert clock.now == 0.25
    assert one.check().retry_after == pytest.approx(0.75, abs=1e-9)
    clock.advance(0.75)
    assert one.check() and keyed.check("a")
    clock.set(0.5)  # backwards: limiters never over-admit
    assert clock.now == 0.5
    assert not one.check() and not keyed.check("a")
    assert repr(clock) == "ManualClock(now=0.5)"


def test_manual_clock_rounds_to_the_nanosecond() -> None:
    clock = ManualClock()
    clock.advance(1e-9)
    clock.advance(0.4e-9)  # rounds to 0
    clock.advance(0.6e-9)  # rounds to 1 ns
    assert clock.now == 2e-9
    clock.set(3)
    assert clock.now == 3.0


def test_len_counts_the_keys_held() -> None:
    limiter = KeyedLimiter("5/second", clock=ManualClock())
    assert len(limiter) == 0
    for key in ("a", "b", "user:42", "a", "é", ""):
        limiter.check(key)
    assert len(limiter) == 5
    assert repr(limiter) == "KeyedLimiter('5/second', algorithm='gcra', keys=5)"


def test_keys_are_compared_exactly() -> None:
    limiter = KeyedLimiter("1/second", clock=ManualClock())
    assert limiter.check("user:1")
    for other in ("user:10", "User:1", "user:1 ", "user:\u0661"):
        assert limiter.check(other), other
    assert not limiter.check("user:1")


def test_max_keys_bounds_the_table_and_a_full_table_says_so() -> None:
    limiter = KeyedLimiter("5/second", clock=ManualClock(), max_keys=1)
    decisions = [limiter.check(f"key:{n}") for n in range(200)]
    full = [d for d in decisions if d.table_full]
    assert full, "no key was refused by a table of max_keys=1"
    # The library's one answer for a full table, in every binding (Node: 1000 ms).
    assert all(not d.allowed and d.retry_after == 1.0 for d in full)
    assert "retry_after=1.0" in repr(full[0]) and "table_full=True" in repr(full[0])
    assert len(limiter) < 200
    assert len(limiter) + len(full) == 200


def test_on_the_real_clock_a_burst_passes_and_the_next_request_waits() -> None:
    limiter = KeyedLimiter("5/minute")
    assert all(limiter.check("a") for _ in range(5))
    denied = limiter.check("a")
    assert not denied
    assert denied.retry_after is not None and 0 < denied.retry_after <= 12.0


def test_reset_forgets_a_key() -> None:
    for algorithm in ALGORITHMS_FOR_RESET:
        clock = sluicegate.ManualClock()
        limiter = sluicegate.KeyedLimiter("2/hour", algorithm=algorithm, clock=clock)
        limiter.hit("alice", 5)
        assert not limiter.peek("alice")
        assert limiter.reset("alice") is True
        fresh = limiter.peek("never-seen")
        again = limiter.peek("alice")
        assert (again.allowed, again.remaining) == (fresh.allowed, fresh.remaining), algorithm
        assert limiter.reset("bob") is False
        long = "k" * 200
        assert limiter.check(long)
        assert limiter.reset(long)
        assert len(limiter) == 0  # peeks insert nothing; both keys forgotten


ALGORITHMS_FOR_RESET = ["gcra", "token-bucket", "leaky-bucket", "fixed-window",
                        "sliding-window", "sliding-log"]
