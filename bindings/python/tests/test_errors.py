"""Bad input: a ValueError carrying the engine's own sentence, or a TypeError naming what
came instead; never a crash, never a silent answer."""

from __future__ import annotations

import math
import re
from typing import Any, Callable

import pytest

from sluicegate import KeyedLimiter, Limiter, ManualClock

LIMITERS: list[Callable[..., Any]] = [Limiter, KeyedLimiter]


def call(limiter: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """`limiter.method(...)`, with a key first when the limiter is keyed."""
    key = ("user:42",) if isinstance(limiter, KeyedLimiter) else ()
    return getattr(limiter, method)(*key, *args, **kwargs)


@pytest.mark.parametrize("make", LIMITERS)
@pytest.mark.parametrize(
    ("quota", "message"),
    [
        ("x", 'invalid quota "x": expected a limit (a whole number, as in "100/minute") at column 1'),
        ("0/second", "a quota's limit must be at least 1 request"),
        ("5/0s", 'invalid quota "5/0s": the period count must be at least 1 at column 3'),
        ("5/second burst 0", "a quota's burst must be at least 1 request"),
        ("5/fortnight", 'invalid quota "5/fortnight"'),
    ],
)
def test_a_bad_quota_is_a_value_error_with_the_engines_sentence(
    make: Callable[..., Any], quota: str, message: str
) -> None:
    with pytest.raises(ValueError) as error:
        make(quota)
    assert str(error.value).startswith(message)


@pytest.mark.parametrize("make", LIMITERS)
def test_a_quota_the_algorithm_cannot_run_says_why(make: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match=r"^SlidingLog cannot run this quota: .*the largest limit is"):
        make("20000000/second", algorithm="sliding-log")


@pytest.mark.parametrize("make", LIMITERS)
def test_an_unknown_algorithm_names_the_six(make: Callable[..., Any]) -> None:
    with pytest.raises(ValueError) as error:
        make("5/second", algorithm="leaky-window")
    assert 'unknown algorithm "leaky-window"' in str(error.value)
    assert ("expected gcra, token-bucket, leaky-bucket, fixed-window, sliding-window or "
            "sliding-log") in str(error.value)


@pytest.mark.parametrize("make", LIMITERS)
@pytest.mark.parametrize("argument", ["quota", "algorithm"])
def test_a_quota_or_algorithm_that_is_not_a_str_is_a_type_error(
    make: Callable[..., Any], argument: str
) -> None:
    arguments: dict[str, Any] = {"quota": "5/second", "algorithm": "gcra", argument: 5}
    with pytest.raises(TypeError, match=f"^{argument} must be a str, got int$"):
        make(**arguments)


@pytest.mark.parametrize("make", LIMITERS)
@pytest.mark.parametrize("method", ["check", "peek"])
def test_a_cost_that_can_never_fit_is_a_value_error(make: Callable[..., Any], method: str) -> None:
    limiter = make("5/second burst 3")
    message = "a request of cost 4 can never be admitted: the capacity is 3"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call(limiter, method, 4)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call(limiter, method, cost=4)
    # Nothing was consumed by the refusals.
    assert call(limiter, "peek", 0).remaining == 3


@pytest.mark.parametrize("make", LIMITERS)
@pytest.mark.parametrize("method", ["check", "peek", "hit"])
@pytest.mark.parametrize(
    ("cost", "error", "message"),
    [
        (-1, ValueError, "cost must not be negative, got -1"),
        (1.5, ValueError, "cost must be a whole number of requests (an int), got 1.5"),
        (2.0, ValueError, "cost must be a whole number of requests (an int), got 2.0"),
        (2**32, ValueError, "cost 4294967296 is too large: a cost is at most 4294967295"),
        (2**200, ValueError, "is out of range"),
        ("1", TypeError, "cost must be an int, got str"),
        (None, TypeError, "cost must be an int, got NoneType"),
    ],
)
def test_a_negative_fractional_oversized_or_non_int_cost_says_what_is_wrong(
    make: Callable[..., Any], method: str, cost: Any, error: type, message: str
) -> None:
    limiter = make("5/second")
    with pytest.raises(error) as raised:
        call(limiter, method, cost)
    assert message in str(raised.value)
    assert call(limiter, "peek", 0).remaining == 5


@pytest.mark.parametrize("method", ["check", "peek", "hit"])
@pytest.mark.parametrize(("key", "name"), [(42, "int"), (b"user", "bytes"), (None, "NoneType")])
def test_a_key_that_is_not_a_str_is_a_type_error(method: str, key: Any, name: str) -> None:
    limiter = KeyedLimiter("5/second")
    with pytest.raises(TypeError, match=f"^key must be a str, got {name}$"):
        getattr(limiter, method)(key)
    assert len(limiter) == 0


def test_a_key_with_an_unpaired_surrogate_is_an_error_not_a_crash() -> None:
    with pytest.raises(UnicodeEncodeError):
        KeyedLimiter("5/second").check("\ud800")


@pytest.mark.parametrize("make", LIMITERS)
def test_a_clock_that_is_not_a_manual_clock_is_a_type_error(make: Callable[..., Any]) -> None:
    with pytest.raises(TypeError, match="^clock must be a sluicegate.ManualClock or None, got float$"):
        make("5/second", clock=1.0)


@pytest.mark.parametrize(
    ("max_keys", "error", "message"),
    [
        (0, ValueError, "max_keys must be at least 1, got 0"),
        (-5, ValueError, "max_keys must be at least 1, got -5"),
        (1.5, TypeError, "max_keys must be an int or None, got float"),
        ("10", TypeError, "max_keys must be an int or None, got str"),
    ],
)
def test_a_bad_max_keys_says_what_is_wrong(max_keys: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        KeyedLimiter("5/second", max_keys=max_keys)


@pytest.mark.parametrize("method", ["advance", "set"])
@pytest.mark.parametrize("seconds", [-0.5, math.inf, math.nan])
def test_a_manual_clock_refuses_negative_infinite_and_nan_seconds(method: str, seconds: float) -> None:
    clock = ManualClock()
    clock.advance(1)
    with pytest.raises(ValueError, match=f"^ManualClock.{method} takes a finite number of seconds"):
        getattr(clock, method)(seconds)
    assert clock.now == 1.0
