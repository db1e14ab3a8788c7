"""The WSGI middleware around Flask (`app.wsgi_app = RateLimitMiddleware(app.wsgi_app,
...)`) under gunicorn, over real HTTP on 127.0.0.1: its answers are the Rust tower layer's,
byte for byte (the `http_server` example's for the same limits). One worker here: limits in
process are per process (Redis shares them: test_middleware_redis.py)."""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, List

from http_servers import Response, answers_match_rust, get, gunicorn


def same_answers_as_rust(limits: List[Dict[str, Any]],
                         requests: List[Dict[str, str]]) -> List[Response]:
    return answers_match_rust(lambda: gunicorn({"limits": limits}, 1), limits, requests)


def test_requests_pass_then_get_429_with_retry_after() -> None:
    answers = same_answers_as_rust([{"name": "ip", "key": "ip", "quota": "3/minute"}],
                                   [{}] * 5)
    assert [answer.status for answer in answers] == [200, 200, 200, 429, 429]
    assert all(answer.header("RateLimit-Policy") == '"ip";q=3;w=60' for answer in answers)
    assert [answer.header("RateLimit") for answer in answers[:3]] == [
        '"ip";r=2;t=20', '"ip";r=1;t=40', '"ip";r=0;t=60']
    assert answers[0].body == b"ok\n" and answers[0].header("Retry-After") is None
    assert answers[3].header("Retry-After") == "20"
    assert answers[3].body == b'too many requests for limit "ip"; retry after 20 seconds\n'


def test_a_request_without_its_header_key_gets_400() -> None:
    limits = [{"name": "token", "key": "header:x-api-key", "quota": "100/minute burst 20",
               "algorithm": "token-bucket"}]
    answers = same_answers_as_rust(limits, [{}, {"X-Api-Key": "k-1"}])
    assert [answer.status for answer in answers] == [400, 200]
    assert answers[0].body == b'limit "token": the x-api-key header is missing or empty\n'
    assert answers[1].header("RateLimit") == '"token";r=19;t=1'


def test_several_limits_are_all_or_nothing() -> None:
    limits = [{"name": "ip", "key": "ip", "quota": "5/minute"},
              {"name": "token", "key": "header:x-api-key", "quota": "2/minute",
               "algorithm": "sliding-log"}]
    tokens = ["a", "a", "a", "a", "b", "b", "b", "c", "d"]
    answers = same_answers_as_rust(limits, [{"X-Api-Key": t} for t in tokens])
    assert [answer.status for answer in answers] == [200, 200, 429, 429, 200, 200, 429, 200,
                                                     429]


def test_a_key_function_gets_the_environ_and_none_is_refused() -> None:
    limits = [{"name": "user", "key": "function:x-user", "quota": "2/minute"}]
    with gunicorn({"limits": limits}, 1) as server:
        statuses = [get(server.port, headers={"X-User": "alice"}).status for _ in range(3)]
        bob = get(server.port, headers={"X-User": "bob"})
        anonymous = get(server.port)
    assert statuses == [200, 200, 429]
    assert bob.status == 200 and bob.header("RateLimit") == '"user";r=1;t=30'
    assert anonymous.status == 400
    assert anonymous.body == b'limit "user": its key function found no key in this request\n'


def test_a_leaky_bucket_holds_requests_for_their_slot() -> None:
    limits = [{"name": "paced", "key": "global", "quota": "4/second",
               "algorithm": "leaky-bucket"}]
    with gunicorn({"limits": limits}, 1, "--threads", "4") as server:
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
