"""Route limits without a name count per route (named after the route's methods and path
template), in process and on a real redis-server alike: FastAPI's dependency (through
Starlette's TestClient) and Flask's decorator (through Flask's test client). With a name,
one limit is shared by every route it is on. Misused as a bare decorator on a FastAPI route,
`limit(...)` says how to use it; run in a thread pool, it decides as a blocking call."""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional

import pytest
from fastapi import APIRouter, Depends, FastAPI, Request, Response
from fastapi.testclient import TestClient
from flask import Flask

from conftest import RedisServer
from sluicegate import BackendFailure
from sluicegate._route import MAX_ROUTE_NAME, route_name
from sluicegate.fastapi import RateLimitExceeded
from sluicegate.fastapi import limit as fastapi_limit
from sluicegate.flask import limit as flask_limit

CLIENT = ("192.0.2.7", 4000)


def fastapi_app(redis: Optional[str], name: Optional[str] = None) -> FastAPI:
    """`/login` and `/signup` (POST) behind one `limit("3/minute")`, `/users/{uid}` (GET)
    and `/items` (GET and POST in one route) behind another."""
    app = FastAPI()
    auth = fastapi_limit("3/minute", redis=redis, name=name)
    other = fastapi_limit("2/minute", redis=redis)

    @app.post("/login", dependencies=[Depends(auth)])
    async def login() -> Dict[str, str]:
        return {"ok": "login"}

    @app.post("/signup", dependencies=[Depends(auth)])
    async def signup() -> Dict[str, str]:
        return {"ok": "signup"}

    @app.get("/users/{uid}", dependencies=[Depends(other)])
    async def user(uid: int) -> Dict[str, int]:
        return {"uid": uid}

    @app.api_route("/items", methods=["GET", "POST"], dependencies=[Depends(other)])
    async def items() -> Dict[str, str]:
        return {"ok": "items"}

    return app


def statuses(client: Any, calls: List[str]) -> List[int]:
    answers = []
    for call in calls:
        method, path = call.split(" ")
        answers.append(client.request(method, path).status_code)
    return answers


@pytest.mark.parametrize("on_redis", [False, True])
def test_fastapi_unnamed_route_limits_count_per_route(on_redis: bool,
                                                      redis_server: RedisServer) -> None:
    redis = redis_server.url if on_redis else None
    if on_redis:
        # Earlier runs (or other tests) left no state under these names.
        for name in ("POST /login", "POST /signup", "GET /users/:uid", "GET,POST /items"):
            redis_server.cli("EVAL", "for _,k in ipairs(redis.call('KEYS', ARGV[1])) do "
                             "redis.call('DEL', k) end", "0", f"sluicegate:http:{name}:*")
    with TestClient(fastapi_app(redis), client=CLIENT) as client:
        # Two logins and one signup: the signup is still allowed (its own count).
        assert statuses(client, ["POST /login", "POST /login", "POST /signup"]) == [200] * 3
        signup = client.post("/signup")
        assert signup.status_code == 200
        assert signup.headers["RateLimit-Policy"] == '"POST /signup";q=3;w=60'
        assert signup.headers["RateLimit"] == '"POST /signup";r=1;t=40'
        assert statuses(client, ["POST /signup", "POST /signup"]) == [200, 429]
        assert statuses(client, ["POST /login", "POST /login"]) == [200, 429]
        # One route, whatever its parameters: /users/1 and /users/2 count together.
        assert statuses(client, ["GET /users/1", "GET /users/2", "GET /users/3"]) == [
            200, 200, 429]
        refused = client.get("/users/4")
        assert refused.json() == {
            "detail": 'too many requests for limit "GET /users/:uid"; retry after 30 seconds'}
        # One route of two methods counts both together.
        assert statuses(client, ["GET /items", "POST /items", "GET /items"]) == [200, 200, 429]
    if on_redis:
        names = redis_server.cli("KEYS", "sluicegate:http:*192.0.2.7*")
        assert "sluicegate:http:POST /login:" in names
        assert "sluicegate:http:POST /signup:" in names
        assert "sluicegate:http:GET /users/:uid:" in names


def test_fastapi_a_named_limit_is_one_limit_for_every_route(redis_server: RedisServer) -> None:
    with TestClient(fastapi_app(None, name="auth"), client=CLIENT) as client:
        assert statuses(client, ["POST /login", "POST /login", "POST /signup",
                                 "POST /signup"]) == [200, 200, 200, 429]
        assert client.post("/login").headers["RateLimit-Policy"] == '"auth";q=3;w=60'


def test_fastapi_an_app_wide_dependency_counts_each_route_on_its_own() -> None:
    # slowapi's and Flask-Limiter's `default_limits`: each route its own count.
    app = FastAPI(dependencies=[Depends(fastapi_limit("1/minute"))])
    router = APIRouter(prefix="/v1")

    @app.get("/a")
    async def a() -> str:
        return "a"

    @router.get("/a")
    async def v1_a() -> str:
        return "v1"

    app.include_router(router)
    # One router included twice, and an app mounted: each route by the path it is reached by.
    app.include_router(router, prefix="/admin")
    sub = FastAPI(dependencies=[Depends(fastapi_limit("1/minute"))])

    @sub.get("/files/{rest:path}")
    async def files(rest: str) -> str:
        return rest

    app.mount("/sub", sub)
    with TestClient(app, client=CLIENT) as client:
        assert statuses(client, ["GET /a", "GET /v1/a", "GET /admin/v1/a", "GET /a",
                                 "GET /v1/a", "GET /admin/v1/a"]) == [200] * 3 + [429] * 3
        assert client.get("/v1/a").headers["RateLimit-Policy"] == '"GET /v1/a";q=1;w=60'
        assert client.get("/admin/v1/a").headers["RateLimit-Policy"] == (
            '"GET /admin/v1/a";q=1;w=60')
        assert statuses(client, ["GET /sub/files/a/b", "GET /sub/files/c"]) == [200, 429]
        assert client.get("/sub/files/d").headers["RateLimit-Policy"] == (
            '"GET /sub/files/:rest";q=1;w=60')


def test_fastapi_reset_reaches_every_route_of_an_unnamed_limit() -> None:
    auth = fastapi_limit("1/minute")
    app = FastAPI()

    @app.post("/login", dependencies=[Depends(auth)])
    async def login() -> str:
        return "ok"

    @app.post("/signup", dependencies=[Depends(auth)])
    async def signup() -> str:
        return "ok"

    with TestClient(app, client=CLIENT) as client:
        assert statuses(client, ["POST /login", "POST /signup", "POST /login",
                                 "POST /signup"]) == [200, 200, 429, 429]
        assert auth.reset("192.0.2.7") is True
        assert statuses(client, ["POST /login", "POST /signup"]) == [200, 200]
        assert auth.reset("192.0.2.99") is False


def flask_app(redis: Optional[str], name: Optional[str] = None) -> Flask:
    app = Flask(__name__)
    auth = flask_limit("3/minute", redis=redis, name=name)

    @app.post("/login")
    @auth
    def login() -> str:
        return "login"

    @app.post("/signup")
    @auth
    def signup() -> str:
        return "signup"

    @app.get("/users/<int:uid>")
    @flask_limit("2/minute", redis=redis)
    def user(uid: int) -> str:
        return str(uid)

    return app


@pytest.mark.parametrize("on_redis", [False, True])
def test_flask_unnamed_view_limits_count_per_route(on_redis: bool,
                                                   redis_server: RedisServer) -> None:
    redis = redis_server.url if on_redis else None
    address = "192.0.2.8" if on_redis else "192.0.2.9"
    client = flask_app(redis).test_client()
    environ = {"REMOTE_ADDR": address}

    def send(call: str) -> Any:
        method, path = call.split(" ")
        return client.open(path, method=method, environ_base=environ)

    assert [send(c).status_code for c in ["POST /login", "POST /login", "POST /signup"]] == [
        200] * 3
    signup = send("POST /signup")
    assert signup.status_code == 200
    assert signup.headers["RateLimit-Policy"] == '"POST /signup";q=3;w=60'
    assert [send(c).status_code for c in ["POST /signup", "POST /signup"]] == [200, 429]
    # Flask answers HEAD with the GET view: one count.
    assert [send(c).status_code for c in ["GET /users/1", "HEAD /users/2", "GET /users/3"]] == [
        200, 200, 429]
    assert send("GET /users/3").headers["RateLimit-Policy"] == '"GET /users/:uid";q=2;w=60'
    if on_redis:
        names = redis_server.cli("KEYS", f"sluicegate:http:*{address}*")
        assert "sluicegate:http:POST /login:" in names
        assert "sluicegate:http:POST /signup:" in names


def test_flask_a_named_limit_is_one_limit_for_every_view() -> None:
    client = flask_app(None, name="auth").test_client()
    answers = [client.post(path).status_code
               for path in ["/login", "/signup", "/login", "/signup"]]
    assert answers == [200, 200, 200, 429]


def test_route_names_are_bounded_and_free_of_braces() -> None:
    assert route_name({"GET", "HEAD"}, "/users/{uid}") == "GET /users/:uid"
    assert route_name({"GET", "HEAD", "OPTIONS"}, "/files/<path:rest>") == "GET /files/:rest"
    assert route_name({"POST", "GET"}, "/a/{p:path}/<b>") == "GET,POST /a/:p/:b"
    assert route_name({"HEAD"}, "/") == "HEAD /"
    long_a = route_name({"GET"}, "/" + "a" * 100)
    long_b = route_name({"GET"}, "/" + "a" * 99 + "b")
    assert len(long_a) == len(long_b) == MAX_ROUTE_NAME
    assert long_a != long_b and long_a[:40] == long_b[:40]


def test_fastapi_limit_used_as_a_decorator_says_to_use_depends() -> None:
    app = FastAPI()
    with pytest.raises(TypeError, match=r"use `Depends\(limit\(\.\.\.\)\)`"):
        @app.get("/x")
        @fastapi_limit("2/minute")  # type: ignore[arg-type, misc]
        async def x() -> str:
            return "x"


def scope(path: str = "/x") -> Dict[str, Any]:
    return {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
            "query_string": b"", "headers": [], "client": ["192.0.2.7", 4000],
            "root_path": ""}


def test_fastapi_dependency_run_in_a_thread_decides_as_a_blocking_call() -> None:
    # What a FastAPI that does not follow `__wrapped__` does: the dependency is a sync
    # callable to it, run in its thread pool, with no event loop in that thread.
    dependency = fastapi_limit("1/minute", name="threaded")
    outcomes: List[Any] = []

    def call() -> None:
        response = Response()
        try:
            outcomes.append((dependency(request=Request(scope()), response=response),
                             response.headers.get("ratelimit")))
        except RateLimitExceeded as refused:
            outcomes.append((refused.status_code, refused.headers["retry-after"]))

    for _ in range(2):
        thread = threading.Thread(target=call)
        thread.start()
        thread.join()
    assert outcomes == [(None, '"threaded";r=0;t=60'), (429, "60")]


def test_route_limits_report_a_redis_outage_to_on_backend_failure(unused_port: int) -> None:
    down = f"redis://127.0.0.1:{unused_port}/"
    reports: List[BackendFailure] = []
    app = FastAPI()

    @app.get("/a", dependencies=[Depends(fastapi_limit("1/minute", redis=down,
                                                       on_backend_failure=reports.append))])
    async def a() -> str:
        return "a"

    views = Flask(__name__)

    @views.get("/b")
    @flask_limit("1/minute", redis=down, on_backend_error="deny",
                 on_backend_failure=reports.append)
    def b() -> str:
        return "b"

    with TestClient(app, client=CLIENT) as client:
        assert [client.get("/a").status_code for _ in range(2)] == [200, 200]
    assert [views.test_client().get("/b").status_code for _ in range(2)] == [503, 503]
    assert reports == [BackendFailure(("GET /a",), 1, 1, "allow", False),
                       BackendFailure(("GET /b",), 1, 1, "deny", False)]
