"""The middlewares with their limits on a real Redis (a redis-server of the tests' own):
shared by gunicorn's workers, answering as the Rust `http_server --redis` does, and
`on_backend_error` while Redis is down."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any, Callable, Dict, List

import pytest

from conftest import RedisServer
from http_servers import (Response, Server, get, gunicorn, http_server, policy,
                          until_decided_on_redis, uvicorn)

IP = {"name": "ip", "key": "ip", "quota": "3/minute", "algorithm": "sliding-log"}

STARTERS: Dict[str, Callable[[Dict[str, Any]], Server]] = {
    "asgi": lambda options: uvicorn("starlette_app", options),
    "wsgi": lambda options: gunicorn(options, 2),
}


@pytest.mark.parametrize("interface", ["asgi", "wsgi"])
def test_limits_on_redis_answer_as_rusts(interface: str, redis_server: RedisServer) -> None:
    options = {"limits": [IP], "redis": redis_server.url}
    redis_server.cli("FLUSHALL")
    with STARTERS[interface](options) as python:
        ours = [get(python.port) for _ in range(4)]
    with http_server([policy(IP)], "--redis", redis_server.url) as rust:
        until_decided_on_redis(rust.port)
        redis_server.cli("FLUSHALL")
        theirs = [get(rust.port) for _ in range(4)]
    assert [answer.status for answer in ours] == [200, 200, 200, 429]
    assert [answer.limited() for answer in ours] == [answer.limited() for answer in theirs]
    assert ours[3].header("Retry-After") == "60"


@pytest.mark.parametrize("interface", ["asgi", "wsgi"])
@pytest.mark.parametrize("choice", ["allow", "deny"])
def test_on_backend_error_while_redis_is_down(interface: str, choice: str,
                                              unused_port: int) -> None:
    down = f"redis://127.0.0.1:{unused_port}/"
    options = {"limits": [IP], "redis": down, "on_backend_error": choice}
    with STARTERS[interface](options) as python:
        ours = [get(python.port) for _ in range(2)]
    with http_server([policy(IP)], "--redis", down, "--on-backend-error", choice) as rust:
        theirs = [get(rust.port) for _ in range(2)]
    assert [answer.limited() for answer in ours] == [answer.limited() for answer in theirs]
    for answer in ours:
        assert answer.header("RateLimit-Policy") == '"ip";q=3;w=60'
        assert answer.header("RateLimit") is None
        if choice == "allow":
            assert answer.status == 200 and answer.body == b"ok\n"
        else:
            assert answer.status == 503 and answer.header("Retry-After") == "1"
            assert b"the rate limiter is unavailable; retry after 1 second" in answer.body


def test_a_middleware_started_while_redis_is_down_uses_it_once_it_answers(
        unused_port: int) -> None:
    options = {"limits": [IP], "redis": f"redis://127.0.0.1:{unused_port}/",
               "on_backend_error": "deny"}
    with uvicorn("fastapi_app", options) as python:
        assert get(python.port).status == 503
        redis = RedisServer(port=unused_port)
        try:
            deadline = time.monotonic() + 20
            while (answer := get(python.port)).status == 503:
                assert time.monotonic() < deadline, "Redis was never used once it answered"
                time.sleep(0.1)
            assert answer.status == 200 and answer.header("RateLimit") == '"ip";r=2;t=60'
        finally:
            redis.stop()


def test_gunicorns_workers_share_one_limit_through_redis(redis_server: RedisServer) -> None:
    """Three workers forked after the app was imported (`--preload`), twelve requests at
    once: exactly the quota of six pass, served by more than one worker."""
    limit = {"name": "ip", "key": "ip", "quota": "6/minute"}
    options = {"limits": [limit], "redis": redis_server.url}
    redis_server.cli("FLUSHALL")
    answers: List[Response] = []
    with gunicorn(options, 3, "--preload") as server:
        def one() -> None:
            answers.append(get(server.port, "/pid?sleep=0.3"))

        threads = [threading.Thread(target=one) for _ in range(12)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert Counter(answer.status for answer in answers) == {200: 6, 429: 6}
    workers = {answer.body for answer in answers if answer.status == 200}
    assert len(workers) >= 2, f"one worker served every request: {workers}"
