"""One limit on one real redis-server, shared by a Python process (the ASGI middleware under
uvicorn) and a Rust process (the `http_server` example's tower layer) that name it alike:
they take turns against it, and each sees the other's requests."""

from __future__ import annotations

import pytest

from conftest import RedisServer
from http_servers import get, http_server, policy, until_decided_on_redis, uvicorn


@pytest.mark.parametrize("algorithm", ["gcra", "sliding-log"])
def test_a_python_and_a_rust_process_share_one_limit(algorithm: str,
                                                     redis_server: RedisServer) -> None:
    limit = {"name": "shared", "key": "ip", "quota": "4/minute", "algorithm": algorithm}
    with http_server([policy(limit)], "--redis", redis_server.url) as rust, \
            uvicorn("starlette_app", {"limits": [limit], "redis": redis_server.url}) as python:
        until_decided_on_redis(rust.port)
        redis_server.cli("FLUSHALL")
        turns = [rust, python, rust, python, python, rust]
        answers = [get(server.port) for server in turns]
        keys = redis_server.cli("--scan", "--pattern", "sluicegate:http:shared:*").split()
    assert [answer.status for answer in answers] == [200, 200, 200, 200, 429, 429]
    assert [answer.header("RateLimit")[:14] for answer in answers[:4]] == [
        '"shared";r=3;t', '"shared";r=2;t', '"shared";r=1;t', '"shared";r=0;t']
    assert answers[4].header("Retry-After") == answers[5].header("Retry-After")
    assert answers[4].body == answers[5].body
    # One key for the one client, under the library's prefix for HTTP limits.
    assert len(keys) == 1 and keys[0].startswith("sluicegate:http:shared:{127.0.0.1}"), keys
