"""`sluicegate.drf`'s throttles on DRF views (django_urls.py) under Django's test `Client`:
DRF's rates and scopes, `wait()` the engine's exact wait (DRF's `Retry-After`), the client
address the library's (trusted proxies), and the counts on Redis."""

from __future__ import annotations

import logging
from typing import Any, Dict, List

import pytest

import django_setup  # noqa: F401  (configures Django before its test tools are imported)
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView
from rest_framework.response import Response

from sluicegate.drf import (AnonRateThrottle, ScopedRateThrottle, SluicegateRateThrottle,
                            UserRateThrottle, reset_throttles)

RATES = {"anon": "2/min", "user": "3/hour", "uploads": "1/day"}


def drf(rates: Dict[str, str] = RATES, **sluicegate: Any) -> Any:
    """Settings of DRF's rates (DRF reads them into its throttles' THROTTLE_RATES at import,
    so the classes' attribute is what a test changes) and of the library."""
    for throttle in (AnonRateThrottle, UserRateThrottle, ScopedRateThrottle):
        throttle.THROTTLE_RATES = rates
    reset_throttles()
    return override_settings(MIDDLEWARE=["django_urls.user_from_header"], **sluicegate)


def test_anon_throttle_counts_then_answers_drfs_429_with_the_exact_wait() -> None:
    with drf():
        client = Client()
        answers = [client.get("/drf/anon") for _ in range(3)]
    assert [answer.status_code for answer in answers] == [200, 200, 429]
    # A sliding log of 2 a minute: the first request leaves the window a minute after it.
    assert answers[2]["Retry-After"] == "60"
    assert answers[2].json() == {
        "detail": "Request was throttled. Expected available in 60 seconds."}


def test_user_throttle_counts_users_apart_and_anonymous_clients_by_address() -> None:
    with drf():
        client = Client()
        one = [client.get("/drf/user", HTTP_X_TEST_USER="1").status_code for _ in range(4)]
        two = client.get("/drf/user", HTTP_X_TEST_USER="2").status_code
        anonymous = [client.get("/drf/user").status_code for _ in range(4)]
    assert one == [200, 200, 200, 429] and two == 200
    assert anonymous == [200, 200, 200, 429]


def test_anon_throttle_leaves_signed_in_users_alone() -> None:
    with drf():
        client = Client()
        statuses = [client.get("/drf/anon", HTTP_X_TEST_USER="1").status_code
                    for _ in range(5)]
    assert statuses == [200] * 5


def test_scoped_throttle_reads_the_views_scope() -> None:
    with drf():
        client = Client()
        answers = [client.get("/drf/scoped") for _ in range(2)]
    assert [answer.status_code for answer in answers] == [200, 429]
    assert answers[1]["Retry-After"] == "86400"


def test_the_client_address_is_the_librarys_through_trusted_proxies_only() -> None:
    with drf(SLUICEGATE={"trusted_proxies": ["127.0.0.1"]}):
        client = Client()
        behind = [client.get("/drf/anon", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}").status_code
                  for n in (1, 1, 2, 1)]
    with drf():
        client = Client()
        # Nobody trusted: X-Forwarded-For is the client's own writing, never its identity
        # (DRF with NUM_PROXIES unset would key each of these apart).
        spoofed = [client.get("/drf/anon", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}").status_code
                   for n in (1, 2, 3)]
    assert behind == [200, 200, 200, 429]
    assert spoofed == [200, 200, 429]


def test_get_ident_is_the_library_client_address() -> None:
    factory = APIRequestFactory()
    request = factory.get("/", HTTP_X_FORWARDED_FOR="192.0.2.9, 10.0.0.2",
                          REMOTE_ADDR="10.0.0.1")
    with drf(SLUICEGATE={"trusted_proxies": ["10.0.0.0/8"]}):
        assert AnonRateThrottle().get_ident(request) == "192.0.2.9"
    with drf(SLUICEGATE={"trusted_proxies": ["10.0.0.1"]}):
        assert AnonRateThrottle().get_ident(request) == "10.0.0.2"
    with drf():
        assert AnonRateThrottle().get_ident(request) == "10.0.0.1"


class ThreePerMinute(SluicegateRateThrottle):
    """A test's throttle on its own time, as DRF's tests write it: `timer` overridden."""

    rate = "3/min"
    now = 0.0

    def timer(self) -> float:
        return type(self).now

    def get_cache_key(self, request: Any, view: Any) -> str:
        return "everyone"


def test_wait_is_the_engines_exact_retry_after() -> None:
    waits: List[Any] = []
    reset_throttles()
    for at in (0.0, 10.0, 20.0, 25.5):
        ThreePerMinute.now = at
        throttle = ThreePerMinute()
        allowed = throttle.allow_request(None, None)
        waits.append((allowed, throttle.wait()))
    assert waits == [(True, None), (True, None), (True, None), (False, 34.5)]


def test_other_algorithms_and_parse_rate_overrides() -> None:
    class PerTenMinutes(ThreePerMinute):
        algorithm = "gcra"

        def parse_rate(self, rate: Any) -> Any:
            return (3, 600)  # a custom period, as DRF users override parse_rate for

    PerTenMinutes.now = 0.0
    reset_throttles()
    throttles = [PerTenMinutes() for _ in range(4)]
    allowed = [throttle.allow_request(None, None) for throttle in throttles]
    assert allowed == [True, True, True, False]
    assert throttles[3].wait() == 200.0  # GCRA: one request back every 600 / 3 seconds


def test_throttles_on_redis_are_shared_by_every_process(redis_server: Any,
                                                        prefix: str) -> None:
    with drf(SLUICEGATE_DRF={"redis": redis_server.url, "prefix": f"{prefix}drf:"}):
        client = Client()
        first = [client.get("/drf/anon").status_code for _ in range(2)]
        reset_throttles()  # what another process starts with: nothing in process
        refused = client.get("/drf/anon")
    keys = redis_server.cli("--scan", "--pattern", f"{prefix}drf:*").split()
    assert first == [200, 200]
    assert refused.status_code == 429 and refused["Retry-After"] == "60"
    assert keys and all("throttle_anon_127.0.0.1" in key for key in keys), keys


def test_a_redis_that_cannot_answer_lets_requests_through_or_throttles(
        own_redis: Any, prefix: str, caplog: pytest.LogCaptureFixture) -> None:
    own_redis.stop()
    with drf(SLUICEGATE_DRF={"redis": own_redis.url, "prefix": f"{prefix}:"}):
        with caplog.at_level(logging.WARNING, logger="sluicegate"):
            allowed = [Client().get("/drf/anon").status_code for _ in range(3)]
    with drf(SLUICEGATE_DRF={"redis": own_redis.url, "on_backend_error": "deny"}):
        denied = Client().get("/drf/anon")
    assert allowed == [200, 200, 200]
    assert "Redis cannot decide the DRF throttles" in caplog.text
    assert denied.status_code == 429 and denied["Retry-After"] == "1"


def test_a_view_of_several_throttles_gets_the_longest_wait() -> None:
    class Fast(ThreePerMinute):
        rate = "1/s"

        def get_cache_key(self, request: Any, view: Any) -> str:
            return "fast"

    class Both(APIView):
        throttle_classes = [Fast, ThreePerMinute]

        def get(self, request: Any) -> Response:
            return Response("ok")

    reset_throttles()
    factory = APIRequestFactory()
    answers = []
    for at in (0, 1, 2, 2.5):
        Fast.now = ThreePerMinute.now = at
        answers.append(Both.as_view()(factory.get("/")))
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    assert answers[3]["Retry-After"] == "58"  # 3/min: 57.5 s, rounded up; 1/s: 0.5 s


def test_redis_given_as_a_dict_and_its_mistakes(redis_server: Any, prefix: str) -> None:
    with drf(SLUICEGATE_DRF={"redis": {"url": redis_server.url}, "prefix": f"{prefix}d:"}):
        statuses = [Client().get("/drf/anon").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    with drf(SLUICEGATE_DRF={"redis": {"url": redis_server.url, "password": "x"}}):
        with pytest.raises(ImproperlyConfigured, match="unknown key.*'password'"):
            Client().get("/drf/anon")
    with drf(SLUICEGATE_DRF={"algorithm": "gcra", "timeout": 1, "colour": "blue"}):
        with pytest.raises(ImproperlyConfigured, match="unknown option.*'colour'"):
            Client().get("/drf/anon")
