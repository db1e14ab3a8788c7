"""The middlewares' and route helpers' options, decided in process on hand-made scopes and
environs: mistakes caught where they are built, header forms, bodies, exemptions, the
client address given to key functions, and Redis outages (logged, counted, or decided
locally)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, Dict, List, Optional, Tuple

import pytest

from sluicegate import BackendFailure, HttpLimiter
from sluicegate.asgi import RateLimitMiddleware as Asgi
from sluicegate.wsgi import RateLimitMiddleware as Wsgi

IP = [{"name": "ip", "key": "ip", "quota": "1/minute"}]


def scope(path: str = "/", client: str = "192.0.2.7",
          headers: Optional[List[Tuple[bytes, bytes]]] = None) -> Dict[str, Any]:
    return {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
            "query_string": b"", "headers": headers or [], "client": (client, 4000)}


def call(app: Asgi, request: Dict[str, Any]) -> Tuple[int, Dict[bytes, bytes], bytes]:
    sent: List[Dict[str, Any]] = []

    async def receive() -> Dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(request, receive, send))
    return sent[0]["status"], dict(sent[0]["headers"]), sent[1]["body"]


async def hello(_scope: Any, _receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hi"})


@pytest.mark.parametrize("middleware", [Asgi, Wsgi])
def test_limits_given_a_dict_or_a_str_say_a_list_is_wanted(middleware: Any) -> None:
    for wrong in ({"name": "ip", "key": "ip", "quota": "5/second"}, "5/second"):
        with pytest.raises(TypeError, match=r"limits must be a list of dicts, got (dict|str): "
                                            r"write limits=\[\{\"name\": \"ip\""):
            middleware(hello, limits=wrong)


@pytest.mark.parametrize("middleware", [Asgi, Wsgi])
def test_a_bad_redis_url_is_a_value_error_where_it_is_built(middleware: Any) -> None:
    with pytest.raises(ValueError, match=r'redis\.url: "notaurl" is not a Redis URL'):
        middleware(hello, limits=IP, redis="notaurl")
    from sluicegate.fastapi import limit
    with pytest.raises(ValueError, match="is not a Redis URL"):
        limit("5/minute", redis="notaurl")


def test_a_bad_key_spec_names_ip_in_pythons_terms() -> None:
    with pytest.raises(ValueError) as error:
        HttpLimiter([{"name": "x", "key": "peer", "quota": "1/s"}])
    message = str(error.value)
    assert '"ip"' in message and "peer-ip" not in message and '"header:NAME"' in message


def test_header_forms_and_bodies() -> None:
    legacy = HttpLimiter(IP, headers="legacy", body="problem+json")
    passed = legacy.decide_asgi(scope())
    assert passed.passes and [name for name, _ in passed.headers] == [
        b"x-ratelimit-limit", b"x-ratelimit-remaining", b"x-ratelimit-reset"]
    refused = legacy.decide_asgi(scope())
    headers = dict(refused.headers)
    assert refused.status == 429 and headers[b"retry-after"] == b"60"
    assert b"ratelimit" not in headers and headers[b"x-ratelimit-remaining"] == b"0"
    assert headers[b"content-type"] == b"application/problem+json"
    assert json.loads(refused.body)["violated-policies"] == ["ip"]
    assert (refused.limit, refused.remaining, refused.retry_after) == ("ip", 0, 60)
    off = HttpLimiter(IP, headers=False, body="json")
    assert off.decide_asgi(scope()).headers == []
    refused = off.decide_asgi(scope())
    # No Retry-After either, as slowapi and Flask-Limiter with headers off; still known.
    assert [name for name, _ in refused.headers if name.startswith(b"r")] == []
    assert (refused.status, refused.retry_after) == (429, 60)
    assert json.loads(refused.body) == {
        "detail": 'too many requests for limit "ip"; retry after 60 seconds'}
    both = HttpLimiter(IP, headers="both")
    assert len(both.decide_asgi(scope()).headers) == 5
    for wrong, error in (("x-ratelimit", ValueError), (3, TypeError)):
        with pytest.raises(error):
            HttpLimiter(IP, headers=wrong)
    with pytest.raises(ValueError, match="is not a body"):
        HttpLimiter(IP, body="html")


def test_asgi_exempt_on_breach_and_a_body_function() -> None:
    breaches: List[Tuple[str, Optional[int]]] = []
    app = Asgi(hello, limits=IP, exempt=lambda s: s["path"] == "/health",
               on_breach=lambda s, verdict: breaches.append((s["path"], verdict.retry_after)),
               body=lambda s, verdict: f"wait {verdict.retry_after} s", content_type="text/x")
    assert [call(app, scope("/health"))[0] for _ in range(3)] == [200, 200, 200]
    assert b"ratelimit" not in call(app, scope("/health"))[1]
    status, headers, body = call(app, scope("/a"))
    assert status == 200 and headers[b"ratelimit"] == b'"ip";r=0;t=60'
    status, headers, body = call(app, scope("/a"))
    assert (status, body, headers[b"content-type"], headers[b"content-length"]) == (
        429, b"wait 60 s", b"text/x", b"9")
    assert headers[b"retry-after"] == b"60" and breaches == [("/a", 60)]


def test_wsgi_exempt() -> None:
    def app(environ: Any, start_response: Any) -> List[bytes]:
        start_response("200 OK", [])
        return [b"hi"]
    middleware = Wsgi(app, limits=IP, exempt=lambda environ: environ["PATH_INFO"] == "/health")
    statuses: List[str] = []
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/health", "REMOTE_ADDR": "192.0.2.1"}
    for path in ("/health", "/health", "/a", "/a"):
        middleware({**environ, "PATH_INFO": path},
                   lambda status, headers, exc_info=None: statuses.append(status))
    assert statuses == ["200 OK", "200 OK", "200 OK", "429 Too Many Requests"]


def test_key_functions_get_the_resolved_client_address() -> None:
    seen: List[Optional[str]] = []

    def key(request: Any, client: Optional[str]) -> Optional[str]:
        seen.append(client)
        return client

    limiter = HttpLimiter([{"name": "k", "key": key, "quota": "1/minute"}],
                          trusted_proxies=["10.0.0.0/8"])
    forwarded = [(b"x-forwarded-for", b"203.0.113.5")]
    assert limiter.decide_asgi(scope(client="10.1.2.3", headers=forwarded)).passes
    # Through an untrusted peer, the header is not believed.
    assert limiter.decide_asgi(scope(client="198.51.100.1", headers=forwarded)).passes
    assert not limiter.decide_asgi(scope(client="10.9.9.9", headers=forwarded)).passes
    assert seen == ["203.0.113.5", "198.51.100.1", "203.0.113.5"]
    # One argument: the request alone, as before.
    one = HttpLimiter([{"name": "k", "key": lambda s: s["path"], "quota": "1/minute"}])
    assert one.decide_asgi(scope("/x")).passes and not one.decide_asgi(scope("/x")).passes


def test_an_outage_is_logged_throttled_and_counted(unused_port: int,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="sluicegate")
    app = Asgi(hello, limits=IP, redis=f"redis://127.0.0.1:{unused_port}/")
    statuses = [call(app, scope())[0] for _ in range(5)]
    assert statuses == [200] * 5, "on_backend_error='allow' lets them by"
    assert app.backend_errors == 5
    warnings = [r for r in caplog.records if r.name == "sluicegate"]
    assert len(warnings) == 1, "one warning per 10 seconds"
    assert "Redis cannot decide the limits ip" in warnings[0].getMessage()


def test_an_outage_and_its_end_are_reported_to_on_backend_failure(
        own_redis: Any, caplog: pytest.LogCaptureFixture) -> None:
    reports: List[BackendFailure] = []
    app = Asgi(hello, limits=IP, redis=own_redis.url, on_backend_failure=reports.append)
    assert call(app, scope())[0] == 200
    assert reports == [] and app.backend_errors == 0
    own_redis.pause()
    try:
        assert [call(app, scope(client="192.0.2.2"))[0] for _ in range(3)] == [200] * 3
    finally:
        own_redis.resume()
    # One report for the first failure, the next two within the 10 seconds told by none.
    assert reports == [BackendFailure(("ip",), 1, 1, "allow", False)]
    deadline = time.monotonic() + 10
    while not (reports and reports[-1].recovered):
        assert time.monotonic() < deadline, "Redis deciding again was never reported"
        call(app, scope(client="192.0.2.3"))
        time.sleep(0.05)
    assert reports[-1] == BackendFailure(("ip",), 0, app.backend_errors, "allow", True)
    assert len(reports) == 2 and app.backend_errors >= 3
    # A hook that raises is logged, and the request it ran in is answered all the same.
    caplog.set_level(logging.ERROR, logger="sluicegate")

    def broken(report: BackendFailure) -> None:
        raise RuntimeError("the pager is down")

    down = Asgi(hello, limits=IP, redis="redis://127.0.0.1:1/", on_backend_failure=broken)
    assert call(down, scope())[0] == 200
    assert any("on_backend_failure raised" in r.getMessage() for r in caplog.records)
    with pytest.raises(TypeError, match="on_backend_failure must be a function"):
        Asgi(hello, limits=IP, on_backend_failure="pager")  # type: ignore[arg-type]


def test_local_decides_in_process_while_redis_is_down(unused_port: int) -> None:
    app = Asgi(hello, limits=IP, redis=f"redis://127.0.0.1:{unused_port}/",
               on_backend_error="local")
    assert [call(app, scope())[0] for _ in range(2)] == [200, 429]
    assert app.limiter.backend_fallbacks == 2
    with pytest.raises(ValueError, match="local"):
        Asgi(hello, limits=IP, on_backend_error="sometimes")


def test_the_deny_cache_keeps_a_key_denied_after_redis_forgets_it(own_redis: Any) -> None:
    """What the README says: a key Redis denied stays denied in this process until its
    countdown ends, even when Redis restarts empty (here: FLUSHALL); another key is decided
    by the emptied Redis."""
    limiter = HttpLimiter(IP, redis=own_redis.url)
    assert limiter.decide_asgi(scope()).passes
    assert limiter.decide_asgi(scope()).status == 429
    own_redis.cli("FLUSHALL")
    assert limiter.decide_asgi(scope()).status == 429
    assert limiter.decide_asgi(scope(client="192.0.2.8")).passes
