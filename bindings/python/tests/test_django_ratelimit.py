"""`sluicegate.django.ratelimit`, django-ratelimit's decorator decided by the library, on
the test project's views (django_urls.py) under Django's test `Client`: its keys, rates,
methods, `block`, groups, async views and class-based views, and its limits on Redis."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List

import pytest

import django_setup  # noqa: F401  (configures Django before its test tools are imported)
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.http import HttpResponse
from django.test import AsyncClient, Client, RequestFactory, override_settings

from sluicegate.django import Ratelimited, ratelimit
from sluicegate._django_ratelimit import quota_of

# Each test's views count afresh: the decorator's limiters are rebuilt when the settings
# change, and every test gives settings of its own.
USER_MIDDLEWARE = ["django_urls.user_from_header"]


def fresh(**options: Any) -> Any:
    return override_settings(SLUICEGATE={**options}, MIDDLEWARE=USER_MIDDLEWARE)


def statuses(client: Client, method: str, path: str, count: int,
             **headers: Any) -> List[int]:
    return [getattr(client, method)(path, **headers).status_code for _ in range(count)]


@pytest.mark.parametrize("rate, quota", [
    ("5/m", "5/60s"), ("100/h", "100/3600s"), ("10/s", "10/1s"), ("1000/d", "1000/86400s"),
    ("5/10m", "5/600s"), ("5/", "5/1s"), ("7/2h", "7/7200s"), ("7/2H", "7/2s"), ((3, 45), "3/45s"),
])
def test_django_ratelimits_rates_become_quota_strings(rate: Any, quota: str) -> None:
    assert quota_of(rate) == quota
    from sluicegate import Limiter
    assert Limiter(quota).quota  # the library's parser reads it


def test_a_bad_rate_or_no_key_fails_where_the_view_is_decorated() -> None:
    with pytest.raises(ImproperlyConfigured, match="not a rate"):
        ratelimit(key="ip", rate="five per minute")(lambda request: None)
    with pytest.raises(ImproperlyConfigured, match="key must be specified"):
        ratelimit(rate="5/m")
    with pytest.raises(ImproperlyConfigured, match="Unknown ratelimit key"):
        ratelimit(key="cookie:x", rate="5/m")(lambda request: None)


def test_only_the_methods_given_count_and_a_429_carries_the_headers() -> None:
    with fresh():
        client = Client()
        forms = statuses(client, "get", "/login", 4)
        posts = [client.post("/login") for _ in range(3)]
    assert forms == [200] * 4
    assert [answer.status_code for answer in posts] == [200, 200, 429]
    name = "django_urls.login 2/60s POST"
    assert posts[0]["RateLimit-Policy"] == f'"{name}";q=2;w=60'
    assert posts[0]["RateLimit"] == f'"{name}";r=1;t=30'
    assert posts[2]["Retry-After"] == "30"
    assert posts[2].content == f'too many requests for limit "{name}"; retry after 30 ' \
                               f'seconds\n'.encode()


def test_block_false_sets_request_limited_and_calls_the_view() -> None:
    with fresh():
        client = Client()
        answers = [client.get("/soft") for _ in range(3)]
    assert [(a.status_code, a.content) for a in answers] == [
        (200, b"free\n"), (200, b"limited\n"), (200, b"limited\n")]


def test_ratelimit_raise_raises_ratelimited_a_403() -> None:
    with fresh(ratelimit_raise=True):
        client = Client(raise_request_exception=False)
        answers = [client.get("/user-or-ip") for _ in range(2)]
    assert [answer.status_code for answer in answers] == [200, 403]
    assert issubclass(Ratelimited, PermissionDenied)  # Django answers it 403


def test_the_settings_body_writes_the_429() -> None:
    body = lambda request, verdict: f"{request.path}: wait {verdict.retry_after} s"  # noqa: E731
    with fresh(body=body, content_type="text/x-wait"):
        client = Client()
        answers = [client.get("/user-or-ip") for _ in range(2)]
    assert answers[1].status_code == 429 and answers[1].content == b"/user-or-ip: wait 60 s"
    assert answers[1]["Content-Type"] == "text/x-wait" and answers[1]["Retry-After"] == "60"


def test_the_decorated_view_resets_a_key() -> None:
    from django_urls import login
    with fresh():
        client = Client()
        refused = [client.post("/login").status_code for _ in range(3)]
        forgotten = login.reset("127.0.0.1")
        again = client.post("/login").status_code
        unknown = login.reset("192.0.2.200")
    assert refused == [200, 200, 429] and forgotten is True and again == 200
    assert unknown is False


def test_user_keys() -> None:
    with fresh():
        client = Client()
        anonymous = client.get("/user")
        one = statuses(client, "get", "/user", 3, HTTP_X_TEST_USER="1")
        two = statuses(client, "get", "/user", 1, HTTP_X_TEST_USER="2")
        # user_or_ip: a user by pk, an anonymous client by its address.
        mixed = [statuses(client, "get", "/user-or-ip", 2, HTTP_X_TEST_USER="1"),
                 statuses(client, "get", "/user-or-ip", 2)]
    assert anonymous.status_code == 400  # no user, no key: never one shared "None" count
    assert one == [200, 200, 429] and two == [200]
    assert mixed == [[200, 429], [200, 429]]


def test_header_keys_and_a_rate_of_several_minutes() -> None:
    with fresh():
        client = Client()
        missing = client.get("/api-key")
        keyed = [client.get("/api-key", HTTP_X_API_KEY="k") for _ in range(4)]
        other = client.get("/api-key", HTTP_X_API_KEY="j")
    assert missing.status_code == 400
    assert [answer.status_code for answer in keyed] == [200, 200, 200, 429]
    assert keyed[0]["RateLimit-Policy"] == '"django_urls.api_key 3/600s";q=3;w=600'
    assert keyed[3]["Retry-After"] == "200"
    assert other.status_code == 200


def test_a_key_function_and_a_rate_function_of_group_and_request() -> None:
    with fresh():
        client = Client()
        two = statuses(client, "get", "/by-who?who=a", 3)
        low = statuses(client, "get", "/by-who?who=b&tier=low", 2)
        unlimited = statuses(client, "get", "/by-who?who=c&tier=none", 5)
        answer = client.get("/by-who?who=d")
    assert two == [200, 200, 429] and low == [200, 429] and unlimited == [200] * 5
    assert answer["RateLimit-Policy"] == '"by-who 2/60s";q=2;w=60'


def test_stacked_decorators_each_count() -> None:
    with fresh():
        client = Client()
        posts = statuses(client, "post", "/stacked", 2)
        gets = statuses(client, "get", "/stacked", 3)
    assert posts == [200, 429]  # the UNSAFE limit: one a minute
    assert gets == [200, 200, 429]  # the limit of every method: three, one of them a POST


def test_async_views_and_class_based_views() -> None:
    async def requests() -> List[int]:
        client = AsyncClient()
        return [(await client.get("/limited-async")).status_code for _ in range(2)]

    with fresh():
        awaited = asyncio.run(requests())
        items = statuses(Client(), "get", "/items", 2)
    assert awaited == [200, 429] and items == [200, 429]


def test_the_decorator_needs_no_middleware_and_reads_trusted_proxies() -> None:
    view = ratelimit(key="ip", rate="1/m")(lambda request: HttpResponse("ok"))
    factory = RequestFactory()

    def from_(forwarded: str) -> int:
        return int(view(factory.get("/", HTTP_X_FORWARDED_FOR=forwarded)).status_code)

    with fresh(trusted_proxies=["127.0.0.1"]):
        assert [from_("192.0.2.1"), from_("192.0.2.2"), from_("192.0.2.1")] == [200, 200, 429]


def test_limits_on_redis_are_shared(redis_server: Any, prefix: str) -> None:
    group = f"{prefix}login"
    made: Dict[str, Any] = {}

    def view(request: Any) -> HttpResponse:
        return HttpResponse("ok")

    with fresh(redis=redis_server.url):
        # One group decorating views in two processes: one count on Redis. (In one
        # process, the decorations share their limiter: the second one's would too.)
        made["one"] = ratelimit(key="ip", rate="2/m", group=group)(view)
        from sluicegate import _django_ratelimit
        _django_ratelimit._views.clear()  # what another process starts with
        made["two"] = ratelimit(key="ip", rate="2/m", group=group)(view)
        factory = RequestFactory()
        answers = [made[name](factory.get("/")) for name in ("one", "two", "one")]
    keys = redis_server.cli("--scan", "--pattern",
                            f"sluicegate:http:{group} 2/60s:*").splitlines()
    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert len(keys) == 1, keys


def test_a_redis_that_cannot_answer(own_redis: Any, prefix: str,
                                    caplog: pytest.LogCaptureFixture) -> None:
    own_redis.stop()
    view = ratelimit(key="ip", rate="1/m", group=f"{prefix}down")(
        lambda request: HttpResponse("ok"))
    with fresh(redis=own_redis.url):
        with caplog.at_level("WARNING", logger="sluicegate"):
            allowed = [view(RequestFactory().get("/")).status_code for _ in range(2)]
    with fresh(redis=own_redis.url, on_backend_error="deny"):
        denied = view(RequestFactory().get("/"))
    assert allowed == [200, 200]
    assert "Redis cannot decide the limits" in caplog.text
    assert denied.status_code == 503 and denied["Retry-After"] == "1"
