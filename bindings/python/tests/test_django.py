"""`sluicegate.django.RateLimitMiddleware` under Django's own test `Client` (sync, through
Django's WSGI-like handler) and `AsyncClient` (async, through its ASGI handler), configured
by `settings.SLUICEGATE`: its answers are the library's (the WSGI middleware's, byte for
byte, for the same request), key functions get the Django request, and the options of the
ASGI / WSGI middlewares work from the settings."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, Iterable, List, Tuple

import pytest

import django_setup  # noqa: F401  (configures Django before its test tools are imported)
from django.core.exceptions import ImproperlyConfigured
from django.test import AsyncClient, Client, override_settings

import sluicegate.django
from sluicegate.wsgi import RateLimitMiddleware as WsgiMiddleware

MIDDLEWARE = ["sluicegate.django.RateLimitMiddleware"]
IP = {"name": "ip", "key": "ip", "quota": "2/minute"}


def limited(options: Dict[str, Any], middleware: Iterable[str] = MIDDLEWARE) -> Any:
    return override_settings(MIDDLEWARE=list(middleware), SLUICEGATE=options)


def rate_headers(response: Any) -> Dict[str, str]:
    """The rate-limit headers of a Django response (or of a dict of headers)."""
    headers = {name.lower(): value for name, value in response.items()}
    names = ("RateLimit-Policy", "RateLimit", "Retry-After", "X-RateLimit-Limit",
             "X-RateLimit-Remaining", "X-RateLimit-Reset")
    return {name: headers[name.lower()] for name in names if name.lower() in headers}


def wsgi_answers(limits: List[Dict[str, Any]], count: int) -> List[Tuple[str, Dict[str, str],
                                                                         bytes]]:
    """What `sluicegate.wsgi.RateLimitMiddleware` answers to `count` requests like the
    test Client's (from 127.0.0.1), around an app answering `ok`."""
    def app(environ: Dict[str, Any], start_response: Any) -> List[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok\n"]

    middleware = WsgiMiddleware(app, limits=limits)
    answers = []
    for _ in range(count):
        seen: Dict[str, Any] = {}

        def start_response(status: str, headers: List[Tuple[str, str]],
                           exc_info: Any = None) -> Any:
            seen["status"], seen["headers"] = status, dict(headers)

        body = b"".join(middleware({"REQUEST_METHOD": "GET", "PATH_INFO": "/",
                                    "REMOTE_ADDR": "127.0.0.1"}, start_response))
        answers.append((seen["status"], seen["headers"], body))
    return answers


def test_requests_pass_then_get_the_librarys_429() -> None:
    with limited({"limits": [IP]}):
        client = Client()
        answers = [client.get("/") for _ in range(3)]
    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert answers[0].content == b"ok\n"
    assert rate_headers(answers[0]) == {"RateLimit-Policy": '"ip";q=2;w=60',
                                        "RateLimit": '"ip";r=1;t=30'}
    assert rate_headers(answers[2]) == {"RateLimit-Policy": '"ip";q=2;w=60',
                                        "RateLimit": '"ip";r=0;t=30', "Retry-After": "30"}
    assert answers[2].content == b'too many requests for limit "ip"; retry after 30 seconds\n'
    assert answers[2]["Content-Type"] == "text/plain; charset=utf-8"


def test_the_answers_are_the_wsgi_middlewares_byte_for_byte() -> None:
    with limited({"limits": [IP]}):
        client = Client()
        ours = [client.get("/") for _ in range(3)]
    theirs = wsgi_answers([IP], 3)
    for answer, (status, headers, body) in zip(ours, theirs):
        assert answer.status_code == int(status.split()[0])
        assert rate_headers(answer) == rate_headers(headers)
        assert answer.content == body
    content_types = {name.lower(): value for name, value in theirs[2][1].items()}
    assert ours[2]["Content-Type"] == content_types["content-type"]


def test_the_async_client_goes_through_the_async_middleware() -> None:
    async def requests() -> List[Any]:
        client = AsyncClient()
        return [await client.get("/async") for _ in range(3)]

    with limited({"limits": [IP]}):
        answers = asyncio.run(requests())
    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert answers[0].content == b"ok async\n"
    assert answers[1]["RateLimit"] == '"ip";r=0;t=60'
    assert answers[2]["Retry-After"] == "30"


def test_a_key_function_gets_the_django_request_and_none_is_refused() -> None:
    seen: List[Any] = []

    def tenant(request: Any) -> Any:
        seen.append(request)
        return request.headers.get("x-tenant")

    limits = [{"name": "tenant", "key": tenant, "quota": "1/minute"}]
    with limited({"limits": limits}):
        client = Client()
        first = client.get("/", HTTP_X_TENANT="a")
        again = client.get("/", HTTP_X_TENANT="a")
        other = client.get("/", HTTP_X_TENANT="b")
        none = client.get("/")
    assert [first.status_code, again.status_code, other.status_code] == [200, 429, 200]
    assert none.status_code == 400
    assert none.content == b'limit "tenant": its key function found no key in this request\n'
    assert all(type(request).__name__ == "WSGIRequest" for request in seen)


def test_a_key_function_of_two_arguments_gets_the_client_address() -> None:
    seen: List[str] = []

    def client_and_path(request: Any, client: str) -> str:
        seen.append(client)
        return f"{client} {request.path}"

    with limited({"limits": [{"name": "k", "key": client_and_path, "quota": "1/minute"}]}):
        client = Client()
        statuses = [client.get("/").status_code, client.get("/async").status_code,
                    client.get("/").status_code]
    assert statuses == [200, 200, 429]
    assert seen == ["127.0.0.1"] * 3


def test_trusted_proxies_decide_whose_forwarded_for_is_believed() -> None:
    limits = [{"name": "ip", "key": "ip", "quota": "1/minute"}]
    with limited({"limits": limits, "trusted_proxies": ["127.0.0.1"]}):
        client = Client()
        behind = [client.get("/", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}").status_code
                  for n in (1, 2, 1)]
        assert sluicegate.django.reset("192.0.2.1") is True
        assert client.get("/", HTTP_X_FORWARDED_FOR="192.0.2.1").status_code == 200
    with limited({"limits": limits}):
        client = Client()
        spoofed = [client.get("/", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}").status_code
                   for n in (1, 2)]
    assert behind == [200, 200, 429]
    assert spoofed == [200, 429]  # nobody trusted: one client, 127.0.0.1, whatever it writes


def test_exempt_on_breach_body_and_headers_options() -> None:
    breaches: List[Tuple[str, int]] = []
    options = {
        "limits": [{"name": "ip", "key": "ip", "quota": "1/minute"}],
        "exempt": lambda request: request.path == "/async",
        "on_breach": lambda request, verdict: breaches.append((request.path,
                                                                verdict.retry_after)),
        "body": "json",
        "headers": "legacy",
    }
    with limited(options):
        client = Client()
        free = [client.get("/async") for _ in range(3)]
        passed, refused = client.get("/"), client.get("/")
    assert [answer.status_code for answer in free] == [200, 200, 200]
    assert rate_headers(free[0]) == {}
    legacy = rate_headers(passed)
    assert (legacy["X-RateLimit-Limit"], legacy["X-RateLimit-Remaining"]) == ("1", "0")
    assert "RateLimit" not in legacy and int(legacy["X-RateLimit-Reset"]) > 0
    assert refused.status_code == 429 and refused["Content-Type"] == "application/json"
    assert refused.json() == {"detail": 'too many requests for limit "ip"; retry after 60 '
                                        'seconds'}
    assert breaches == [("/", 60)]


def test_function_options_may_be_dotted_paths() -> None:
    options = {"limits": [{"name": "who", "key": "django_urls.who_key", "quota": "1/minute"}],
               "exempt": "django_urls.exempt_health"}
    with limited(options):
        client = Client()
        statuses = [client.get("/?who=a").status_code, client.get("/?who=a").status_code,
                    client.get("/?who=b").status_code, client.get("/?who=a&health=1").status_code]
    assert statuses == [200, 429, 200, 200]


def test_a_body_function_writes_the_429() -> None:
    options = {"limits": [{"name": "ip", "key": "ip", "quota": "1/minute"}],
               "body": lambda request, verdict: f"slow down on {request.path}, "
                                                f"{verdict.retry_after} s",
               "content_type": "text/x-custom"}
    with limited(options):
        client = Client()
        client.get("/")
        refused = client.get("/")
    assert refused.content == b"slow down on /, 60 s"
    assert refused["Content-Type"] == "text/x-custom"
    assert refused["Retry-After"] == "60"


def test_the_apps_own_429_keeps_its_headers() -> None:
    with limited({"limits": [{"name": "ip", "key": "ip", "quota": "5/minute"}]}):
        inner = Client().get("/too-many")
    assert inner.status_code == 429 and inner.content == b"inner\n"
    assert inner["RateLimit"] == '"inner";r=0;t=9' and inner["Retry-After"] == "9"


def test_settings_mistakes_are_told() -> None:
    with limited({"quota": "5/minute"}):
        with pytest.raises(ImproperlyConfigured, match="unknown option.*'quota'"):
            Client().get("/")
    with limited({}):
        with pytest.raises(ImproperlyConfigured, match=r"needs settings.SLUICEGATE\['limits'\]"):
            Client().get("/")
    with limited({"limits": [{"name": "ip", "key": "ip", "quota": "5 per fortnight"}]}):
        with pytest.raises(ValueError, match="fortnight"):
            Client().get("/")


def test_limits_on_redis_are_shared_by_every_process(redis_server: Any, prefix: str) -> None:
    # Two test Clients: two handlers, two middlewares, as two worker processes have.
    limits = [{"name": f"{prefix}ip", "key": "ip", "quota": "3/minute"}]
    with limited({"limits": limits, "redis": redis_server.url}):
        one, two = Client(), Client()
        statuses = [client.get("/").status_code for client in (one, two, one, two)]
        refused = two.get("/")

        async def in_async() -> Any:
            return await AsyncClient().get("/async")

        awaited = asyncio.run(in_async())
    keys = redis_server.cli("--scan", "--pattern", f"sluicegate:http:{prefix}ip:*").split()
    assert statuses == [200, 200, 200, 429]
    assert refused["Retry-After"] == "20"
    assert awaited.status_code == 429 and awaited["RateLimit"].startswith(f'"{prefix}ip";r=0')
    assert len(keys) == 1 and "127.0.0.1" in keys[0], keys


def test_a_redis_that_cannot_answer_lets_requests_through_or_denies(own_redis: Any,
                                                                    prefix: str) -> None:
    limits = [{"name": f"{prefix}ip", "key": "ip", "quota": "1/minute"}]
    own_redis.stop()
    with limited({"limits": limits, "redis": own_redis.url}):
        allowed = [Client().get("/").status_code for _ in range(2)]
    with limited({"limits": limits, "redis": own_redis.url, "on_backend_error": "deny"}):
        denied = Client().get("/")
    assert allowed == [200, 200]
    assert denied.status_code == 503 and denied["Retry-After"] == "1"
