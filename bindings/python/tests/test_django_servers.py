"""The Django middleware in a Django project served by real servers over real HTTP on
127.0.0.1: uvicorn (Django's ASGI handler, the middleware async) and gunicorn (its WSGI
handler, the middleware sync). Both answer as the ASGI middleware around Starlette does
(the library's answers: status, rate-limit headers, refusal body), in process and on
Redis."""

from __future__ import annotations

from typing import Any, Dict, List

from conftest import RedisServer, free_port
from http_servers import BIN, Response, Server, get, middleware_env, uvicorn

LIMITS = [{"name": "ip", "key": "ip", "quota": "3/minute"}]


def gunicorn_django(options: Dict[str, Any]) -> Server:
    port = free_port()
    return Server([str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "1",
                   "--log-level", "warning", "http_apps.django_app:wsgi"],
                  port, middleware_env(options))


def answers(server: Server, count: int) -> List[Response]:
    with server:
        return [get(server.port) for _ in range(count)]


def test_django_under_uvicorn_and_gunicorn_answers_as_the_asgi_middleware() -> None:
    starlette = answers(uvicorn("starlette_app", {"limits": LIMITS}), 5)
    under_uvicorn = answers(uvicorn("django_app", {"limits": LIMITS}), 5)
    under_gunicorn = answers(gunicorn_django({"limits": LIMITS}), 5)
    assert [answer.status for answer in starlette] == [200, 200, 200, 429, 429]
    assert [answer.limited() for answer in under_uvicorn] == [
        answer.limited() for answer in starlette]
    assert [answer.limited() for answer in under_gunicorn] == [
        answer.limited() for answer in starlette]
    assert under_uvicorn[0].body == b"ok\n" and under_gunicorn[0].body == b"ok\n"


def test_django_under_uvicorn_and_gunicorn_shares_a_limit_on_redis(
        redis_server: RedisServer, prefix: str) -> None:
    limits = [{"name": f"{prefix}ip", "key": "ip", "quota": "4/minute"}]
    options = {"limits": limits, "redis": redis_server.url}
    with uvicorn("django_app", options) as asgi, gunicorn_django(options) as wsgi:
        turns = [asgi, wsgi, asgi, wsgi, asgi, wsgi]
        statuses = [get(server.port).status for server in turns]
    assert statuses == [200, 200, 200, 200, 429, 429]
