"""DRF's own throttling tests (encode/django-rest-framework, tests/test_throttling.py), each
scenario written again here against `sluicegate.drf`'s throttles: the same views, rates,
timer settings and expected answers, each test named after DRF's. DRF's `NUM_PROXIES`
becomes `SLUICEGATE["trusted_proxies"]` (the proxies that many hops in front of the app),
and `cache.clear()` becomes `reset_throttles()`.

Left out, as they test DRF's cache internals or DRF's classes only: `test_non_time_throttle`
and `BaseThrottleTests` (DRF's `BaseThrottle`, not a throttle of ours), and the two
`test_wait_returns_*` of `SimpleRateThrottleTests` (they set DRF's `history` list and
check DRF's estimate from it; here `wait()` is the engine's exact wait, tested in
test_drf.py)."""

from __future__ import annotations

import warnings
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Type

import pytest

import django_setup  # noqa: F401  (configures Django before its test tools are imported)
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django.test import override_settings
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory, force_authenticate
from rest_framework.views import APIView

from sluicegate.drf import (AnonRateThrottle, ScopedRateThrottle, SluicegateRateThrottle,
                            UserRateThrottle, reset_throttles)

factory = APIRequestFactory()


class Timed:
    """DRF's tests set a throttle class's `timer`; these read it from `now`."""

    now = 0.0

    def timer(self) -> float:
        return type(self).now


class ThreePerSecond(Timed, UserRateThrottle):
    rate = "3/sec"
    scope = "seconds"


class ThreePerMinute(Timed, UserRateThrottle):
    rate = "3/min"
    scope = "minutes"


class SixPerMinute(Timed, UserRateThrottle):
    rate = "6/min"
    scope = "minutes"


def view_of(*throttles: Type[Any]) -> Any:
    class Limited(APIView):
        throttle_classes = throttles

        def get(self, request: Any) -> Response:
            return Response("foo")

    return Limited.as_view()


def at(seconds: float, *throttles: Type[Timed]) -> None:
    for throttle in throttles:
        throttle.now = seconds


@pytest.fixture(autouse=True)
def fresh_counts() -> Iterator[None]:
    """DRF's setUp clears its cache; here, the throttles' counts, and their time to 0."""
    at(0, ThreePerSecond, ThreePerMinute, SixPerMinute)
    reset_throttles()
    yield


def test_requests_are_throttled() -> None:
    view = view_of(ThreePerSecond)
    answers = [view(factory.get("/")) for _ in range(4)]
    assert answers[-1].status_code == 429


def test_request_throttling_expires() -> None:
    view = view_of(ThreePerSecond)
    assert [view(factory.get("/")).status_code for _ in range(4)][-1] == 429
    at(1, ThreePerSecond)
    assert view(factory.get("/")).status_code == 200


def test_request_throttling_is_per_user() -> None:
    view = view_of(ThreePerSecond)
    for _ in range(3):
        request = factory.get("/")
        force_authenticate(request, User(pk=1, username="a"))
        view(request)
    request = factory.get("/")
    force_authenticate(request, User(pk=2, username="b"))
    assert view(request).status_code == 200


def test_request_throttling_multiple_throttles() -> None:
    view = view_of(ThreePerSecond, SixPerMinute)
    answers = [view(factory.get("/")) for _ in range(4)]
    assert answers[-1].status_code == 429 and int(answers[-1]["Retry-After"]) == 1
    at(1, ThreePerSecond, SixPerMinute)
    assert [view(factory.get("/")).status_code for _ in range(2)] == [200, 200]
    answer = view(factory.get("/"))
    assert answer.status_code == 429 and int(answer["Retry-After"]) == 59
    at(2, ThreePerSecond, SixPerMinute)
    answer = view(factory.get("/"))
    assert answer.status_code == 429 and int(answer["Retry-After"]) == 58


def test_throttle_rate_change_negative() -> None:
    view = view_of(ThreePerSecond, SixPerMinute)
    answers = [view(factory.get("/")) for _ in range(24)]
    assert answers[-1].status_code == 429 and int(answers[-1]["Retry-After"]) == 60
    try:
        ThreePerSecond.rate = "1/sec"
        answers = [view(factory.get("/")) for _ in range(24)]
        assert answers[-1].status_code == 429 and int(answers[-1]["Retry-After"]) == 60
    finally:
        ThreePerSecond.rate = "3/sec"


def retry_afters(throttle: Type[Timed],
                 timeline: Sequence[Tuple[float, Optional[str]]]) -> None:
    view = view_of(throttle)
    for seconds, expected in timeline:
        at(seconds, throttle)
        answer = view(factory.get("/"))
        if expected is None:
            assert "Retry-After" not in answer
        else:
            assert answer["Retry-After"] == expected


def test_seconds_fields() -> None:
    retry_afters(ThreePerSecond, [(0, None), (0, None), (0, None), (0, "1")])


def test_minutes_fields() -> None:
    retry_afters(ThreePerMinute, [(0, None), (0, None), (0, None), (0, "60")])


def test_next_rate_remains_constant_if_followed() -> None:
    retry_afters(ThreePerMinute, [(0, None), (20, None), (40, None), (60, None), (80, None)])


class XY(Timed, ScopedRateThrottle):
    THROTTLE_RATES = {"x": "3/min", "y": "1/min"}


def scoped_view(scope: Optional[str]) -> Any:
    class Scoped(APIView):
        throttle_classes = (XY,)
        throttle_scope = scope

        def get(self, request: Any) -> Response:
            return Response("x")

    return Scoped.as_view()


def test_scoped_rate_throttle() -> None:
    x, y = scoped_view("x"), scoped_view("y")
    # DRF's timeline: one second between requests, 55 more before the second round.
    timeline = [(0, x, 200), (1, x, 200), (2, x, 200), (3, x, 429), (4, y, 200), (5, y, 429),
                (60, x, 200), (61, x, 200), (62, x, 200), (63, x, 429), (64, y, 200),
                (65, y, 429)]
    for seconds, view, expected in timeline:
        at(seconds, XY)
        assert view(factory.get("/")).status_code == expected, (seconds, expected)


def test_unscoped_view_not_throttled() -> None:
    view = scoped_view(None)
    for _ in range(10):
        XY.now += 1
        assert view(factory.get("/")).status_code == 200


def test_get_cache_key_returns_correct_key_if_user_is_authenticated() -> None:
    class DummyView:
        throttle_scope = "user"

    class Scoped(ScopedRateThrottle):
        THROTTLE_RATES = {"user": None, "anon": None}  # DRF's default rates

    request = Request(HttpRequest())
    user = User(pk=7, username="test")
    force_authenticate(request, user)
    request.user = user
    throttle = Scoped()
    throttle.allow_request(request, DummyView())
    assert throttle.get_cache_key(request, view=DummyView()) == f"throttle_user_{user.pk}"


class OnePerDay(Timed, ScopedRateThrottle):
    THROTTLE_RATES = {"test_limit": "1/day"}


def xff_request(forwarded_for: str) -> Any:
    request = factory.get("/some_uri", HTTP_X_FORWARDED_FOR=forwarded_for)
    request.META["REMOTE_ADDR"] = "3.3.3.3"
    return request


def proxies(count: int) -> Any:
    """DRF's `NUM_PROXIES = count` for the requests of these tests: the last `count` hops
    (3.3.3.3, the peer, then 2.2.2.2) are the app's proxies."""
    return override_settings(SLUICEGATE={"trusted_proxies": ["3.3.3.3", "2.2.2.2"][:count]})


class OneProxyView(APIView):
    throttle_classes = (OnePerDay,)
    throttle_scope = "test_limit"

    def get(self, request: Any) -> Response:
        return Response("test_limit")


def test_xff_accepts_request_under_limit() -> None:  # IdWithXffBasicTests
    with proxies(0):
        assert OneProxyView.as_view()(xff_request("0.0.0.0, 1.1.1.1, 2.2.2.2")).status_code == 200


def test_xff_denies_request_over_limit() -> None:  # IdWithXffBasicTests
    with proxies(0):
        view = OneProxyView.as_view()
        view(xff_request("0.0.0.0, 1.1.1.1, 2.2.2.2"))
        assert view(xff_request("0.0.0.0, 1.1.1.1, 2.2.2.2")).status_code == 429


@pytest.mark.parametrize("count, spoofed", [(1, "4.4.4.4, 5.5.5.5, 2.2.2.2"),
                                            (2, "4.4.4.4, 1.1.1.1, 2.2.2.2")])
def test_xff_spoofing_doesnt_change_machine_id(count: int, spoofed: str) -> None:
    with proxies(count):
        view = OneProxyView.as_view()
        view(xff_request("0.0.0.0, 1.1.1.1, 2.2.2.2"))
        assert view(xff_request(spoofed)).status_code == 429


@pytest.mark.parametrize("count, other", [(1, "0.0.0.0, 1.1.1.1, 7.7.7.7"),
                                          (2, "0.0.0.0, 7.7.7.7, 2.2.2.2")])
def test_unique_clients_are_counted_independently(count: int, other: str) -> None:
    with proxies(count):
        view = OneProxyView.as_view()
        view(xff_request("0.0.0.0, 1.1.1.1, 2.2.2.2"))
        assert view(xff_request(other)).status_code == 200


class Bare(SluicegateRateThrottle):
    """DRF's SimpleRateThrottleTests set `scope = "anon"` on the base class; a subclass
    here, so that the base stays as it is. DRF's default rates are None."""

    scope = "anon"
    THROTTLE_RATES = {"anon": None, "user": None}


def test_get_rate_raises_error_if_scope_is_missing() -> None:
    throttle = Bare()
    throttle.scope = None
    with pytest.raises(ImproperlyConfigured):
        throttle.get_rate()


def test_throttle_raises_error_if_rate_is_missing() -> None:
    class Missing(Bare):
        scope = "invalid scope"

    with pytest.raises(ImproperlyConfigured):
        Missing()


def test_parse_rate_returns_tuple_with_none_if_rate_not_provided() -> None:
    assert Bare().parse_rate(None) == (None, None)


def test_allow_request_returns_true_if_rate_is_none() -> None:
    assert Bare().allow_request(request={}, view={}) is True


def test_get_cache_key_raises_not_implemented_error() -> None:
    with pytest.raises(NotImplementedError):
        Bare().get_cache_key({}, {})


def test_allow_request_returns_true_if_key_is_none() -> None:
    throttle = Bare()
    throttle.rate = "some rate"
    throttle.get_cache_key = lambda *args: None
    assert throttle.allow_request(request={}, view={}) is True


def test_authenticated_user_not_affected() -> None:
    request = Request(HttpRequest())
    user = User(pk=3, username="test")
    force_authenticate(request, user)
    request.user = user
    assert AnonRateThrottle().get_cache_key(request, view={}) is None


def test_get_cache_key_returns_correct_value() -> None:
    # A bare HttpRequest has no REMOTE_ADDR. DRF's ident is then None; the library keys
    # every request without a client address "unix" (a Unix socket's, warning once that
    # they share one key), so the key differs from DRF's "throttle_anon_None" here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        key = AnonRateThrottle().get_cache_key(Request(HttpRequest()), view={})
    assert key == "throttle_anon_unix"
