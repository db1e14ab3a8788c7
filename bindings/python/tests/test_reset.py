"""`reset(key)`: on `RedisLimiter` (and `areset`) against a real redis-server, on the
native `HttpLimiter` behind both middlewares (every limit, every quota, every tier, in
process and on Redis), on the middlewares under uvicorn and gunicorn, and on the route
helpers under uvicorn (FastAPI) and gunicorn (Flask)."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional

import pytest

from conftest import RedisServer, free_port
from http_servers import get, gunicorn, uvicorn
from sluicegate import HttpLimiter, Limit, RedisError, RedisLimiter
from test_route_limits import gunicorn_routes, request


def scope(client: str = "192.0.2.7", headers: Optional[List[Any]] = None) -> Dict[str, Any]:
    return {"type": "http", "method": "GET", "path": "/", "raw_path": b"/",
            "query_string": b"", "headers": headers or [], "client": [client, 4000]}


def test_redis_limiter_reset_forgets_a_key_for_every_process(redis_server: RedisServer,
                                                             prefix: str) -> None:
    with RedisLimiter("2/minute", url=redis_server.url, prefix=prefix) as limiter, \
            RedisLimiter("2/minute", url=redis_server.url, prefix=prefix) as other:
        assert [limiter.check("u").allowed for _ in range(3)] == [True, True, False]
        assert limiter.check("v").allowed
        # The denial was cached in `limiter`; the reset through `other` deletes the state on
        # Redis, and `limiter`'s own reset forgets its cache too.
        assert other.reset("u") is True
        assert limiter.reset("u") is False  # nothing left on Redis
        decision = limiter.check("u")
        assert decision.allowed and decision.remaining == 1
        # "v" was not touched.
        assert limiter.check("v").remaining == 0
        assert limiter.reset("never-seen") is False
        with pytest.raises(TypeError, match="key must be a str, got int"):
            limiter.reset(1)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="closed"):
        limiter.reset("u")


def test_redis_limiter_areset(redis_server: RedisServer, prefix: str) -> None:
    async def run() -> List[Any]:
        async with RedisLimiter("1/minute", url=redis_server.url, prefix=prefix) as limiter:
            first = (await limiter.acheck("k")).allowed
            second = (await limiter.acheck("k")).allowed
            held = await limiter.areset("k")
            again = (await limiter.acheck("k")).allowed
            return [first, second, held, again, await limiter.areset("nobody")]

    assert asyncio.run(run()) == [True, False, True, True, False]


def test_redis_limiter_reset_while_redis_is_down_raises_redis_error(unused_port: int,
                                                                     prefix: str) -> None:
    with RedisLimiter("1/minute", url=f"redis://127.0.0.1:{unused_port}/", prefix=prefix,
                      lazy=True) as limiter:
        with pytest.raises(RedisError):
            limiter.reset("k")


def test_http_limiter_reset_in_process_every_limit_and_quota() -> None:
    limiter = HttpLimiter([
        {"name": "ip", "key": "ip", "quota": "2/minute; 50/hour"},
        {"name": "user", "key": lambda request: "alice", "quota": "1/minute, 10/hour"},
    ])
    assert limiter.names == ["ip", "user"]
    assert limiter.decide_asgi(scope()).passes
    refused = limiter.decide_asgi(scope())
    assert refused.status == 429 and refused.limit == "user-1"
    # Forgetting the client's address alone leaves "user" refusing...
    assert limiter.reset("192.0.2.7") is True
    assert limiter.decide_asgi(scope()).limit == "user-1"
    # ...and forgetting "alice" too lets the request by, both quotas of "ip" fresh again.
    assert limiter.reset("alice") is True
    passed = limiter.decide_asgi(scope())
    assert passed.passes
    assert dict(passed.headers)[b"ratelimit-policy"] == (
        b'"ip-1";q=2;w=60, "ip-2";q=50;w=3600, "user-1";q=1;w=60, "user-2";q=10;w=3600')
    assert limiter.reset("nobody") is False
    with pytest.raises(TypeError, match="key must be a str, got bytes"):
        limiter.reset(b"alice")  # type: ignore[arg-type]


def test_http_limiter_reset_reaches_every_tier() -> None:
    def plan(request: Dict[str, Any]) -> str:
        return "3/minute" if request["headers"] else "1/minute"

    limiter = HttpLimiter([{"name": "plan", "key": "ip", "quota": plan,
                            "quotas": ["1/minute", "3/minute"]}])
    pro = [(b"x-plan", b"pro")]
    assert limiter.decide_asgi(scope()).passes
    assert limiter.decide_asgi(scope(headers=pro)).passes
    assert limiter.decide_asgi(scope()).status == 429
    assert limiter.reset("192.0.2.7") is True
    assert limiter.decide_asgi(scope()).passes
    # The pro tier was forgotten too: 3 of 3 left before this one.
    assert limiter.decide_asgi(scope(headers=pro)).remaining == 2


def test_http_limiter_reset_on_redis(redis_server: RedisServer) -> None:
    name = f"reset{free_port()}"
    limits: List[Limit] = [{"name": name, "key": "ip", "quota": "1/minute; 10/hour"}]
    limiter = HttpLimiter(limits, redis=redis_server.url)
    other = HttpLimiter(limits, redis=redis_server.url)
    assert limiter.decide_asgi(scope()).passes
    assert limiter.decide_asgi(scope()).status == 429
    # Another process's middleware on the same Redis forgets it for everyone.
    assert other.reset("192.0.2.7") is True
    assert limiter.decide_asgi(scope()).passes
    async def areset() -> bool:
        return await other.areset("192.0.2.7")

    assert asyncio.run(areset()) is True
    assert asyncio.run(areset()) is False
    assert limiter.decide_asgi(scope()).passes


def test_http_limiter_reset_while_redis_is_down_raises_redis_error(unused_port: int) -> None:
    limiter = HttpLimiter([{"name": "down", "key": "ip", "quota": "1/minute"}],
                          redis=f"redis://127.0.0.1:{unused_port}/")
    with pytest.raises(RedisError):
        limiter.reset("192.0.2.7")


IP = {"name": "ip", "key": "ip", "quota": "2/minute"}


@pytest.mark.parametrize("interface", ["asgi", "wsgi"])
def test_middleware_reset_under_a_server(interface: str) -> None:
    options = {"limits": [IP], "exempt_paths": ["/reset"]}
    start = (lambda: uvicorn("starlette_app", options)) if interface == "asgi" else (
        lambda: gunicorn(options, 1))
    with start() as server:
        assert [get(server.port).status for _ in range(3)] == [200, 200, 429]
        assert get(server.port, "/reset?key=127.0.0.1").body == b"True"
        after = get(server.port)
        assert after.status == 200 and after.header("RateLimit") == '"ip";r=1;t=30'
        assert get(server.port, "/reset?key=192.0.2.1").body == b"False"


@pytest.mark.parametrize("interface", ["asgi", "wsgi"])
def test_middleware_reset_on_redis_under_a_server(interface: str,
                                                  redis_server: RedisServer) -> None:
    name = f"mw{interface}{free_port()}"
    options = {"limits": [{**IP, "name": name}], "exempt_paths": ["/reset"],
               "redis": redis_server.url}
    start = (lambda: uvicorn("starlette_app", options)) if interface == "asgi" else (
        lambda: gunicorn(options, 2))
    with start() as server:
        # Enough denials that each of gunicorn's workers likely holds one in its deny cache:
        # the reset, served by one of them, reaches the others over Redis pub/sub.
        assert [get(server.port).status for _ in range(8)] == [200, 200] + [429] * 6
        assert redis_server.cli("KEYS", f"sluicegate:http:{name}:*").strip() != ""
        assert get(server.port, "/reset?key=127.0.0.1").body == b"True"
        assert redis_server.cli("KEYS", f"sluicegate:http:{name}:*").strip() == ""
        assert [get(server.port).status for _ in range(3)] == [200, 200, 429]


def test_fastapi_route_limit_reset_under_uvicorn() -> None:
    with uvicorn("fastapi_routes", {"limits": []}) as server:
        assert [request(server.port, "POST", "/login").status for _ in range(4)] == [
            200, 200, 200, 429]
        assert [get(server.port, "/both").status for _ in range(3)] == [200, 200, 429]
        assert get(server.port, "/reset?key=127.0.0.1").body == b"true"
        assert request(server.port, "POST", "/login").status == 200
        assert get(server.port, "/both").header("RateLimit") == '"both-1";r=1;t=30'
        assert get(server.port, "/reset?key=192.0.2.1").body == b"false"


def test_flask_view_limit_reset_under_gunicorn() -> None:
    with gunicorn_routes(1, {}) as server:
        assert [request(server.port, "POST", "/login").status for _ in range(4)] == [
            200, 200, 200, 429]
        assert get(server.port, "/reset?key=127.0.0.1").body == b"True"
        answer = request(server.port, "POST", "/login")
        assert answer.status == 200 and answer.header("RateLimit") == '"POST /login";r=2;t=20'
        assert get(server.port, "/reset?key=192.0.2.1").body == b"False"


def test_route_helpers_reset_in_process() -> None:
    from sluicegate.fastapi import limit as fastapi_limit
    from sluicegate.flask import limit as flask_limit

    dependency = fastapi_limit("1/minute")
    limiter = dependency.limit.limiter
    assert limiter.decide_asgi(scope()).passes
    assert limiter.decide_asgi(scope()).status == 429
    assert dependency.reset("192.0.2.7") is True
    assert limiter.decide_asgi(scope()).passes
    assert limiter.decide_asgi(scope()).status == 429

    async def areset() -> bool:
        return await dependency.areset("192.0.2.7")

    assert asyncio.run(areset()) is True
    decorator = flask_limit("1/minute", name="v")

    def view() -> str:
        return "ok"

    limited = decorator(view)
    route = limited.limit  # type: ignore[attr-defined]
    assert route.limiter.decide_wsgi({"REQUEST_METHOD": "GET", "PATH_INFO": "/",
                                      "REMOTE_ADDR": "192.0.2.7"}).passes
    assert decorator.reset("192.0.2.7") is True
    assert limited.reset("192.0.2.7") is False  # type: ignore[attr-defined]
