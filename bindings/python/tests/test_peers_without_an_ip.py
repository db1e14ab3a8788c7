"""A peer without an IP address is keyed, never a 500: `uvicorn --uds` and gunicorn on a Unix
socket (every request under the key "unix", with one warning saying how to trust the proxy
in front), a trusted socket (`trusted_proxies=["unix"]`) whose proxy's `X-Forwarded-For`
names each client, and Starlette's default `TestClient(app)` (the key "testclient"), with
the middleware and with FastAPI's route limits."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from fastapi import Depends, FastAPI
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from http_servers import BIN, UnixServer, get_unix, middleware_env, uvicorn_uds
from sluicegate.asgi import RateLimitMiddleware
from sluicegate.fastapi import limit

TWO_A_MINUTE = {"name": "ip", "key": "ip", "quota": "2/minute"}


def statuses(path: str, forwarded: List[Optional[str]], target: str = "/") -> List[int]:
    return [get_unix(path, target, {} if xff is None else {"X-Forwarded-For": xff}).status
            for xff in forwarded]


def gunicorn_uds(options: Dict[str, Any], path: str) -> UnixServer:
    return UnixServer([str(BIN / "gunicorn"), "--bind", f"unix:{path}", "--workers", "1",
                       "--log-level", "warning", "http_apps.flask_app:app"],
                      path, middleware_env(options))


@pytest.mark.parametrize("server", ["uvicorn", "gunicorn"])
def test_a_unix_socket_keys_every_request_as_unix_and_warns_once(server: str,
                                                                 tmp_path: Path) -> None:
    path = str(tmp_path / "app.sock")
    options = {"limits": [TWO_A_MINUTE], "exempt_paths": ["/reset"]}
    start = uvicorn_uds("starlette_app", options, path) if server == "uvicorn" else \
        gunicorn_uds(options, path)
    with start as running:
        # A socket nobody trusts: what it forwards is not believed, every request is "unix".
        answers = [get_unix(path, "/", {"X-Forwarded-For": f"203.0.113.{i}"})
                   for i in range(3)]
        assert [a.status for a in answers] == [200, 200, 429]
        assert answers[0].header("RateLimit-Policy") == '"ip";q=2;w=60'
        assert answers[2].body == b'too many requests for limit "ip"; retry after 30 seconds\n'
        if server == "uvicorn":
            assert get_unix(path, "/reset?key=unix").body == b"True"
            assert statuses(path, [None]) == [200]
        output = running.output()
    assert output.count("requests arrive on a Unix socket, which has no client address") == 1
    assert 'add "unix" to trusted_proxies' in output


@pytest.mark.parametrize("server", ["uvicorn", "gunicorn"])
def test_a_trusted_unix_socket_walks_x_forwarded_for(server: str, tmp_path: Path) -> None:
    path = str(tmp_path / "app.sock")
    options = {"limits": [{"name": "ip", "key": "ip", "quota": "1/minute"}],
               "trusted_proxies": ["unix"]}
    start = uvicorn_uds("starlette_app", options, path) if server == "uvicorn" else \
        gunicorn_uds(options, path)
    with start as running:
        # nginx in front writes each client's address: each counts on its own.
        assert statuses(path, ["203.0.113.1", "203.0.113.2", "203.0.113.1",
                               "198.51.100.9, 203.0.113.2"]) == [200, 200, 429, 429]
        # Nothing forwarded: the socket's own key.
        assert statuses(path, [None, None]) == [200, 429]
        output = running.output()
    assert "Unix socket" not in output


def fastapi_app() -> FastAPI:
    app = FastAPI()

    @app.get("/limited", dependencies=[Depends(limit("2/minute"))])
    async def limited() -> Dict[str, str]:
        return {"ok": "yes"}

    return app


def test_fastapis_default_testclient_is_keyed_testclient() -> None:
    app = fastapi_app()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a test client's placeholder is no shared proxy
        with TestClient(app) as client:
            answers = [client.get("/limited") for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[1].headers["RateLimit"] == '"GET /limited";r=0;t=60'


def test_starlettes_default_testclient_through_the_middleware() -> None:
    async def hello(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    middleware = RateLimitMiddleware(Starlette(routes=[Route("/", hello)]),
                                     limits=[TWO_A_MINUTE])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with TestClient(middleware) as client:
            assert [client.get("/").status_code for _ in range(3)] == [200, 200, 429]
    assert middleware.reset("testclient") is True
