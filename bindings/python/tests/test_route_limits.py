"""Per-route limits: `sluicegate.fastapi.limit` (a dependency) under uvicorn and
`sluicegate.flask.limit` (a decorator) under gunicorn, over real HTTP on 127.0.0.1, with
the app-wide middleware beside them, and a view's limit on a real redis-server shared by
two gunicorn workers."""

from __future__ import annotations

import http.client
import json
from typing import Dict, Optional, Tuple

from conftest import RedisServer, free_port
from http_servers import BIN, Response, Server, get, uvicorn


def request(port: int, method: str, path: str,
            headers: Optional[Dict[str, str]] = None) -> Response:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, headers=headers or {})
        answer = connection.getresponse()
        return Response(answer.status, list(answer.getheaders()), answer.read())
    finally:
        connection.close()


def gunicorn_routes(workers: int, env: Dict[str, str]) -> Server:
    port = free_port()
    return Server([str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers",
                   str(workers), "--log-level", "warning", "http_apps.flask_routes:app"],
                  port, env)


def test_fastapi_route_limit_refuses_with_json_detail_and_stays_in_openapi() -> None:
    with uvicorn("fastapi_routes", {"limits": []}) as server:
        answers = [request(server.port, "POST", "/login") for _ in range(4)]
        assert [a.status for a in answers] == [200, 200, 200, 429]
        assert answers[0].body == b'{"ok":"yes"}'
        assert answers[0].header("RateLimit-Policy") == '"login";q=3;w=60'
        assert [a.header("RateLimit") for a in answers[:3]] == [
            '"login";r=2;t=20', '"login";r=1;t=40', '"login";r=0;t=60']
        refused = answers[3]
        assert refused.header("Content-Type") == "application/json"
        assert json.loads(refused.body) == {
            "detail": 'too many requests for limit "login"; retry after 20 seconds'}
        assert refused.header("Retry-After") == "20"
        assert refused.header("RateLimit") == '"login";r=0;t=20'
        # on_breach saw the request and the decision.
        assert json.loads(get(server.port, "/breaches").body) == [
            {"path": "/login", "limit": "login", "retry_after": 20}]
        # The route is documented, and a GET to it is FastAPI's 405, not a redirect.
        paths = json.loads(get(server.port, "/openapi.json").body)["paths"]
        assert "/login" in paths and "post" in paths["/login"]
        assert "/r/a" in paths and "/plan" in paths


def test_fastapi_several_quotas_decide_all_or_nothing() -> None:
    with uvicorn("fastapi_routes", {"limits": []}) as server:
        answers = [get(server.port, "/both") for _ in range(3)]
        assert [a.status for a in answers] == [200, 200, 429]
        assert answers[0].header("RateLimit-Policy") == '"both-1";q=2;w=60, "both-2";q=100;w=3600'
        assert answers[2].header("Retry-After") == "30"
        # The refusal consumed nothing from the hourly limit: 2 of its 100 were used.
        assert answers[1].header("RateLimit") == '"both-1";r=0;t=60'


def test_fastapi_router_limit_legacy_headers_and_custom_body() -> None:
    for handler in (False, True):
        with uvicorn("fastapi_routes", {"limits": [], "handler": handler}) as server:
            a, b = get(server.port, "/r/a"), get(server.port, "/r/b")
            c = get(server.port, "/r/a")
            assert [a.status, b.status, c.status] == [200, 200, 429]
            assert a.header("RateLimit") is None and a.header("RateLimit-Policy") is None
            assert (a.header("X-RateLimit-Limit"), a.header("X-RateLimit-Remaining")) == (
                "2", "1")
            assert b.header("X-RateLimit-Remaining") == "0"
            assert c.header("Retry-After") == "30" and c.header("X-RateLimit-Remaining") == "0"
            # The router's routes share its one limit. Without the exception handler the
            # 429 is FastAPI's JSON of the library's sentence; with it, the body function's.
            if handler:
                assert (c.body, c.header("Content-Type")) == (b"slow down, 30 s", "text/plain")
            else:
                assert json.loads(c.body)["detail"].startswith(
                    'too many requests for limit "router"')


def test_fastapi_quota_chosen_per_request_and_keys_with_the_client_address() -> None:
    with uvicorn("fastapi_routes", {"limits": []}) as server:
        free = [get(server.port, "/plan").status for _ in range(2)]
        pro = [get(server.port, "/plan", {"X-Plan": "pro"}) for _ in range(6)]
        assert free == [200, 429]
        assert [a.status for a in pro] == [200] * 5 + [429]
        assert pro[0].header("RateLimit-Policy") == '"plan";q=5;w=60'
        # A forwarded address from an untrusted peer changes nothing: the key function got
        # the resolved client address (the peer), so this is the same key.
        spoofed = get(server.port, "/plan", {"X-Plan": "pro", "X-Forwarded-For": "192.0.2.9"})
        assert spoofed.status == 429


def test_fastapi_exempt_route_and_middleware_then_route() -> None:
    with uvicorn("fastapi_routes", {"limits": []}) as server:
        health = [get(server.port, "/health") for _ in range(3)]
        assert [a.status for a in health] == [200, 200, 200]
        assert health[0].header("RateLimit") is None
        # /mw/route: the middleware (100/minute) decides first, then the route (1/minute);
        # a passing response carries the middleware's headers (the outer layer writes
        # last), the route's 429 the headers of the limit that refused it.
        first, second = get(server.port, "/mw/route"), get(server.port, "/mw/route")
        assert (first.status, second.status) == (200, 429)
        assert first.header("RateLimit-Policy") == '"app";q=100;w=60'
        assert second.header("Retry-After") == "60"
        assert second.header("RateLimit-Policy") == '"mwroute";q=1;w=60'
        assert second.header("RateLimit") == '"mwroute";r=0;t=60'
        # Exempt paths carry no middleware headers.
        assert get(server.port, "/r/b").header("RateLimit-Policy") is None


def test_flask_view_limits_under_gunicorn() -> None:
    with gunicorn_routes(1, {}) as server:
        answers = [request(server.port, "POST", "/login") for _ in range(4)]
        assert [a.status for a in answers] == [200, 200, 200, 429]
        # Unnamed: the limit is named after its route.
        assert answers[0].header("RateLimit-Policy") == '"POST /login";q=3;w=60'
        assert answers[0].header("RateLimit") == '"POST /login";r=2;t=20'
        assert answers[3].body == (b'too many requests for limit "POST /login"; retry after 20 '
                                   b'seconds\n')
        assert answers[3].header("Retry-After") == "20"
        both = [get(server.port, "/both") for _ in range(3)]
        assert [a.status for a in both] == [200, 200, 429]
        assert both[2].header("Content-Type") == "application/json"
        assert json.loads(both[2].body) == {
            "detail": 'too many requests for limit "both-1"; retry after 30 seconds'}
        # A key function of Flask's request; exempt requests pass uncounted.
        assert get(server.port, "/token").status == 400
        assert [get(server.port, "/token", {"X-Token": "t"}).status for _ in range(2)] == [200, 429]
        assert get(server.port, "/token?probe=1", {"X-Token": "t"}).status == 200
        assert get(server.port, "/token", {"X-Token": "u"}).status == 200


def test_flask_view_limit_on_redis_is_shared_by_workers(redis_server: RedisServer) -> None:
    with gunicorn_routes(2, {"SLUICEGATE_TEST_REDIS": redis_server.url}) as server:
        answers = [get(server.port, "/shared") for _ in range(6)]
        assert [a.status for a in answers] == [200] * 4 + [429] * 2
        assert answers[0].header("RateLimit-Policy") == '"shared";q=4;w=60'
        assert redis_server.cli("KEYS", "sluicegate:http:shared:*").strip() != ""


def test_flask_middleware_then_view_a_429_carries_the_refusing_limits_headers() -> None:
    from flask import Flask

    from sluicegate.flask import limit
    from sluicegate.wsgi import RateLimitMiddleware

    app = Flask(__name__)

    @app.get("/view")
    @limit("1/minute", name="view")
    def view() -> str:
        return "ok"

    @app.get("/busy")
    def busy() -> Tuple[str, int]:
        return "busy", 429  # the app's own 429, no limit's: the middleware's headers

    app.wsgi_app = RateLimitMiddleware(  # type: ignore[method-assign]
        app.wsgi_app, limits=[{"name": "app", "key": "ip", "quota": "100/minute"}])
    client = app.test_client()
    first, second = client.get("/view"), client.get("/view")
    assert (first.status_code, second.status_code) == (200, 429)
    assert first.headers["RateLimit-Policy"] == '"app";q=100;w=60'
    assert second.headers["RateLimit-Policy"] == '"view";q=1;w=60'
    assert second.headers["RateLimit"] == '"view";r=0;t=60'
    assert second.headers["Retry-After"] == "60"
    assert second.headers.getlist("RateLimit") == ['"view";r=0;t=60']
    own = client.get("/busy")
    assert own.status_code == 429 and own.headers["RateLimit-Policy"] == '"app";q=100;w=60'
    assert "Retry-After" not in own.headers
