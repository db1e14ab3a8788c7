"""The ASGI middleware under uvicorn, with Starlette (`RateLimitMiddleware(app, ...)`) and
FastAPI (`app.add_middleware`), over real HTTP on 127.0.0.1: its answers are the Rust
tower layer's, byte for byte (the `http_server` example's for the same limits)."""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, List

import pytest
from websockets.sync.client import connect

from http_servers import Response, answers_match_rust, get, uvicorn

APPS = ["starlette_app", "fastapi_app"]


def same_answers_as_rust(app: str, limits: List[Dict[str, Any]],
                         requests: List[Dict[str, str]]) -> List[Response]:
    return answers_match_rust(lambda: uvicorn(app, {"limits": limits}), limits, requests)


@pytest.mark.parametrize("app", APPS)
def test_requests_pass_then_get_429_with_retry_after(app: str) -> None:
    answers = same_answers_as_rust(app, [{"name": "ip", "key": "ip", "quota": "3/minute"}],
                                   [{}] * 5)
    assert [answer.status for answer in answers] == [200, 200, 200, 429, 429]
    assert all(answer.header("RateLimit-Policy") == '"ip";q=3;w=60' for answer in answers)
    assert [answer.header("RateLimit") for answer in answers[:3]] == [
        '"ip";r=2;t=20', '"ip";r=1;t=40', '"ip";r=0;t=60']
    assert answers[0].body == b"ok\n" and answers[0].header("Retry-After") is None
    refused = answers[3]
    assert refused.header("Retry-After") == "20"
    assert refused.header("RateLimit") == '"ip";r=0;t=20'
    assert refused.body == b'too many requests for limit "ip"; retry after 20 seconds\n'


@pytest.mark.parametrize("app", APPS)
def test_a_request_without_its_header_key_gets_400(app: str) -> None:
    limits = [{"name": "token", "key": "header:x-api-key", "quota": "100/minute burst 20",
               "algorithm": "token-bucket"}]
    answers = same_answers_as_rust(app, limits, [{}, {"X-Api-Key": "k-1"}])
    assert [answer.status for answer in answers] == [400, 200]
    assert answers[0].body == b'limit "token": the x-api-key header is missing or empty\n'
    assert answers[0].header("Content-Type") == "text/plain; charset=utf-8"
    assert answers[0].header("RateLimit-Policy") == '"token";q=100;w=60'
    assert answers[1].header("RateLimit") == '"token";r=19;t=1'


@pytest.mark.parametrize("app", APPS)
def test_several_limits_are_all_or_nothing(app: str) -> None:
    """A request denied by one limit consumes nothing from the others: five tokens' worth
    of requests pass the per-IP limit of 5, however many the token limit refused."""
    # No fixed or sliding window here: their `t` depends on the wall clock, which moves
    # between the two servers' runs.
    limits = [{"name": "ip", "key": "ip", "quota": "5/minute"},
              {"name": "token", "key": "header:x-api-key", "quota": "2/minute",
               "algorithm": "sliding-log"}]
    tokens = ["a", "a", "a", "a", "b", "b", "b", "c", "d"]
    answers = same_answers_as_rust(app, limits, [{"X-Api-Key": t} for t in tokens])
    assert [answer.status for answer in answers] == [200, 200, 429, 429, 200, 200, 429, 200,
                                                     429]
    assert answers[2].body.startswith(b'too many requests for limit "token"')
    assert answers[8].body.startswith(b'too many requests for limit "ip"')


@pytest.mark.parametrize("app", APPS)
def test_a_key_function_keys_the_request_and_none_is_refused(app: str) -> None:
    limits = [{"name": "user", "key": "function:x-user", "quota": "2/minute"}]
    with uvicorn(app, {"limits": limits}) as server:
        statuses = [get(server.port, headers={"X-User": "alice"}).status for _ in range(3)]
        bob = get(server.port, headers={"X-User": "bob"})
        anonymous = get(server.port)
    assert statuses == [200, 200, 429]
    assert bob.status == 200 and bob.header("RateLimit") == '"user";r=1;t=30'
    assert anonymous.status == 400
    # The limit named once.
    assert anonymous.body == b'limit "user": its key function found no key in this request\n'


@pytest.mark.parametrize("app", APPS)
def test_websocket_and_lifespan_scopes_pass_untouched(app: str) -> None:
    limits = [{"name": "all", "key": "global", "quota": "1/minute"}]
    with uvicorn(app, {"limits": limits}) as server:
        assert get(server.port, "/lifespan").body == b"started"
        for i in range(3):
            with connect(f"ws://127.0.0.1:{server.port}/echo", open_timeout=10) as socket:
                socket.send(f"hello {i}")
                assert socket.recv(timeout=10) == f"hello {i}"
        assert get(server.port).status == 429


@pytest.mark.parametrize("app", APPS)
def test_a_leaky_bucket_holds_requests_for_their_slot(app: str) -> None:
    """Four requests at once under "4/second" (one slot every 250 ms, four may wait): all
    pass, the last no sooner than 750 ms after the first was admitted."""
    limits = [{"name": "paced", "key": "global", "quota": "4/second",
               "algorithm": "leaky-bucket"}]
    with uvicorn(app, {"limits": limits}) as server:
        done: List[float] = []
        statuses: List[int] = []

        def one() -> None:
            statuses.append(get(server.port).status)
            done.append(time.monotonic())

        start = time.monotonic()
        threads = [threading.Thread(target=one) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert statuses == [200] * 4
    assert max(done) - start >= 0.7
