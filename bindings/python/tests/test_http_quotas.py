"""Several quotas in one quota string (the library's `Quota::parse_many`, decided
all-or-nothing), quotas chosen per request among a bounded set (tiers) on the middlewares'
limits, and `max_keys` bounding the in-process tables: on the native `HttpLimiter`, under
uvicorn (Starlette, FastAPI) and gunicorn (Flask), and on a real redis-server."""

from __future__ import annotations

import json
import time
from typing import Any, Dict, List, Optional, Tuple

import pytest

from conftest import RedisServer, free_port
from http_servers import Response, get, gunicorn, uvicorn
from sluicegate import HttpLimiter, Limit
from test_route_limits import gunicorn_routes


def scope(client: str = "192.0.2.7", headers: Optional[List[Any]] = None) -> Dict[str, Any]:
    return {"type": "http", "method": "GET", "path": "/", "raw_path": b"/",
            "query_string": b"", "headers": headers or [], "client": [client, 4000]}


def test_several_quotas_in_one_string_decide_all_or_nothing() -> None:
    limiter = HttpLimiter([{"name": "ip", "key": "ip", "quota": "1/second; 3 per minute"}])
    first = limiter.decide_asgi(scope())
    assert first.passes
    assert dict(first.headers)[b"ratelimit-policy"] == b'"ip-1";q=1;w=1, "ip-2";q=3;w=60'
    # The per-second part refuses; the per-minute part is not charged for the refusals.
    refused = [limiter.decide_asgi(scope()) for _ in range(5)]
    assert [(v.status, v.limit) for v in refused] == [(429, "ip-1")] * 5
    time.sleep(1.05)
    assert limiter.decide_asgi(scope()).passes
    time.sleep(1.05)
    third = limiter.decide_asgi(scope())
    assert third.passes
    time.sleep(1.05)
    # Three admitted: now the per-minute part refuses, though a second has passed.
    fourth = limiter.decide_asgi(scope())
    assert (fourth.status, fourth.limit) == (429, "ip-2")


@pytest.mark.parametrize("quota, message", [
    ("5/minute;", 'limit "ip": '),
    ("5/minute; 0/hour", 'limit "ip": '),
    ("5/minute; 5/fortnight", "fortnight"),
])
def test_a_bad_list_of_quotas_is_a_value_error(quota: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HttpLimiter([{"name": "ip", "key": "ip", "quota": quota}])


def test_route_helpers_take_several_quotas_in_one_string() -> None:
    from sluicegate.fastapi import limit

    dependency = limit("2/minute | 100/hour", name="r")
    assert dependency.limit.limiter.names == ["r"]
    verdict = dependency.limit.limiter.decide_asgi(scope())
    assert dict(verdict.headers)[b"ratelimit-policy"] == b'"r-1";q=2;w=60, "r-2";q=100;w=3600'
    with pytest.raises(ValueError, match="invalid quota"):
        limit("5/minute; nope")


def plan(request: Dict[str, Any]) -> str:
    return "5/minute; 100/hour" if request["headers"] else "1/minute"


PRO = [(b"x-plan", b"pro")]


def test_a_quota_chosen_per_request_among_tiers() -> None:
    limiter = HttpLimiter([
        {"name": "all", "key": "ip", "quota": "4/minute"},
        {"name": "plan", "key": "ip", "quota": plan,
         "quotas": ["1/minute", "5/minute; 100/hour"]},
    ])
    free = limiter.decide_asgi(scope())
    assert dict(free.headers)[b"ratelimit-policy"] == b'"all";q=4;w=60, "plan";q=1;w=60'
    assert (limiter.decide_asgi(scope()).status, limiter.decide_asgi(scope()).limit) == (
        429, "plan")
    pro = [limiter.decide_asgi(scope(headers=PRO)) for _ in range(3)]
    assert dict(pro[0].headers)[b"ratelimit-policy"] == (
        b'"all";q=4;w=60, "plan-1";q=5;w=60, "plan-2";q=100;w=3600')
    # "all" is one table whatever the tier: 1 free + 3 pro use it up; the free tier's
    # refusals consumed nothing of it.
    assert [v.passes for v in pro] == [True, True, True]
    refused = limiter.decide_asgi(scope(headers=PRO))
    assert (refused.status, refused.limit) == (429, "all")
    # Another client has its own keys in every tier.
    assert limiter.decide_asgi(scope("192.0.2.8", PRO)).passes


@pytest.mark.parametrize("limit, error, message", [
    ({"quota": plan}, ValueError, 'needs "quotas"'),
    ({"quota": plan, "quotas": "1/minute"}, TypeError, '"quotas" must be a list'),
    ({"quota": plan, "quotas": []}, ValueError, '"quotas" is empty'),
    ({"quota": plan, "quotas": ["1/minute", "1/minute"]}, ValueError, "twice"),
    ({"quota": plan, "quotas": ["1/minute", 5]}, TypeError, "each of quotas must be a str"),
    ({"quota": plan, "quotas": ["1/minute", "5/fortnight"]}, ValueError, "fortnight"),
    ({"quota": "1/minute", "quotas": ["1/minute"]}, ValueError,
     '"quotas" goes with a quota given as a function'),
])
def test_bad_tiers_say_what_is_wrong(limit: Dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        HttpLimiter([{"name": "plan", "key": "ip", **limit}])  # type: ignore[typeddict-item]


def test_too_many_combinations_of_tiers_are_refused() -> None:
    quotas = [f"{n}/minute" for n in range(1, 18)]
    limits: List[Limit] = [{"name": f"p{i}", "key": "ip", "quota": plan, "quotas": quotas}
                           for i in range(2)]
    with pytest.raises(ValueError, match="289 combinations of quotas; at most 256"):
        HttpLimiter(limits)


def test_a_quota_function_returning_another_quota_raises_value_error() -> None:
    limiter = HttpLimiter([{"name": "plan", "key": "ip", "quota": lambda request: "9/minute",
                            "quotas": ["1/minute"]}])
    with pytest.raises(ValueError, match=r"returned '9/minute', which is not one of its "
                                         r'quotas \["1/minute"\]'):
        limiter.decide_asgi(scope())
    none = HttpLimiter([{"name": "plan", "key": "ip", "quota": lambda request: None,
                         "quotas": ["1/minute"]}])
    with pytest.raises(ValueError, match="returned None"):
        none.decide_wsgi({"REQUEST_METHOD": "GET", "PATH_INFO": "/", "REMOTE_ADDR": "1.2.3.4"})


TIERS = {"name": "plan", "key": "ip", "quota": "function:x-plan",
         "quotas": ["1/minute", "3/minute"]}


@pytest.mark.parametrize("interface", ["asgi", "wsgi"])
def test_middleware_tiers_under_a_server(interface: str) -> None:
    options = {"limits": [TIERS]}
    start = (lambda: uvicorn("fastapi_app", options)) if interface == "asgi" else (
        lambda: gunicorn(options, 1))
    with start() as server:
        free = [get(server.port) for _ in range(2)]
        assert [a.status for a in free] == [200, 429]
        assert free[0].header("RateLimit-Policy") == '"plan";q=1;w=60'
        pro = [get(server.port, "/", {"X-Plan": "3/minute"}) for _ in range(4)]
        assert [a.status for a in pro] == [200, 200, 200, 429]
        assert pro[0].header("RateLimit-Policy") == '"plan";q=3;w=60'


@pytest.mark.parametrize("interface", ["asgi", "wsgi"])
def test_middleware_several_quotas_and_tiers_on_redis(interface: str,
                                                      redis_server: RedisServer) -> None:
    name = f"q{interface}{free_port()}"
    options = {"limits": [{**TIERS, "name": name, "quotas": ["1/minute", "2/minute; 9/hour"]}],
               "redis": redis_server.url}
    start = (lambda: uvicorn("starlette_app", options)) if interface == "asgi" else (
        lambda: gunicorn(options, 2))
    with start() as server:
        assert [get(server.port).status for _ in range(2)] == [200, 429]
        pro = [get(server.port, "/", {"X-Plan": "2/minute; 9/hour"}) for _ in range(3)]
        assert [a.status for a in pro] == [200, 200, 429]
        assert pro[0].header("RateLimit-Policy") == (
            f'"{name}-1";q=2;w=60, "{name}-2";q=9;w=3600')
        assert pro[2].header("RateLimit") == f'"{name}-1";r=0;t=30'
        for part in (name, f"{name}-1", f"{name}-2"):
            assert redis_server.cli("KEYS", f"sluicegate:http:{part}:*").strip() != ""


# The library splits a table into shards (4 per core, a power of two, at most 256) holding
# ceil(max_keys / shards) keys each: with max_keys=1, at most 256 keys fit, so among 300
# new keys some are refused whatever the machine (the servers' tests below).
KEYS = [f"user-{n}" for n in range(300)]
# With max_keys=256 every shard holds exactly 256 / shards keys on any machine, so the table
# fills to 256 exactly once each shard has seen that many keys: 3,000 keys leave a shard
# short with odds under 1 in 400 even at 256 shards of one key (and none at 8 or 64).
MANY_KEYS = [f"user-{n}" for n in range(3000)]


def test_max_keys_bounds_the_table_with_a_clear_refusal() -> None:
    limiter = HttpLimiter([{"name": "user", "key": "header:x-user", "quota": "5/minute"}],
                          max_keys=256, body="json")

    def user(name: str) -> Dict[str, Any]:
        return scope(headers=[(b"x-user", name.encode())])

    verdicts = {key: limiter.decide_asgi(user(key)) for key in MANY_KEYS}
    admitted = [key for key, v in verdicts.items() if v.passes]
    full = [v for v in verdicts.values() if not v.passes]
    assert len(admitted) == 256 and len(full) == 3000 - 256
    # No limit decided the refusal (`limit` is None): the body names the full one.
    assert {(v.status, v.retry_after, v.limit) for v in full} == {(503, 1, None)}
    assert json.loads(full[0].body) == {
        "detail": 'limit "user" is tracking as many clients as it can; retry after 1 second'}
    # An admitted key goes on being decided by its quota.
    assert limiter.decide_asgi(user(admitted[0])).remaining == 3
    # Key functions' limits are bounded too.
    fn = HttpLimiter([{"name": "fn", "key": lambda scope: scope["path"], "quota": "5/minute"}],
                     max_keys=1)
    statuses = {fn.decide_asgi(dict(scope(), path=f"/{key}", raw_path=key.encode())).status
                for key in KEYS}
    assert statuses == {0, 503}


@pytest.mark.parametrize("max_keys, error, message", [
    (0, ValueError, "max_keys must be at least 1, got 0"),
    (-5, ValueError, "max_keys must be at least 1"),
    (1.5, TypeError, "max_keys must be an int or None, got float"),
    ("10", TypeError, "max_keys must be an int or None, got str"),
])
def test_bad_max_keys_say_what_is_wrong(max_keys: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        HttpLimiter([{"name": "ip", "key": "ip", "quota": "1/s"}], max_keys=max_keys)
    from sluicegate.asgi import RateLimitMiddleware
    from sluicegate.flask import limit

    with pytest.raises(error, match=message):
        RateLimitMiddleware(lambda *a: None,  # type: ignore[arg-type, return-value]
                            limits=[{"name": "ip", "key": "ip", "quota": "1/s"}],
                            max_keys=max_keys)
    with pytest.raises(error, match=message):
        limit("1/s", max_keys=max_keys)(lambda: "ok")


@pytest.mark.parametrize("interface", ["asgi", "wsgi"])
def test_middleware_max_keys_under_a_server(interface: str) -> None:
    options = {"limits": [{"name": "user", "key": "header:x-user", "quota": "5/minute"}],
               "max_keys": 1}
    start = (lambda: uvicorn("starlette_app", options)) if interface == "asgi" else (
        lambda: gunicorn(options, 1))
    with start() as server:
        admitted, full = fill(server.port, "/")
        assert full.body == (b'limit "user" is tracking as many clients as it can; '
                             b'retry after 1 second\n')
        assert get(server.port, "/", {"X-User": admitted}).status == 200


def fill(port: int, path: str) -> Tuple[str, Response]:
    """New keys until the table refuses one: a key it admitted, and the refusal."""
    admitted: List[str] = []
    for key in KEYS:
        answer = get(port, path, {"X-User": key})
        if answer.status == 200:
            admitted.append(key)
            continue
        assert (answer.status, answer.header("Retry-After")) == (503, "1")
        assert 1 <= len(admitted) <= 256
        return admitted[0], answer
    raise AssertionError("max_keys=1 admitted 300 keys")


def test_route_helpers_max_keys_and_several_quotas_under_servers() -> None:
    with uvicorn("fastapi_routes", {"limits": []}) as server:
        several = [get(server.port, "/several") for _ in range(3)]
        assert [a.status for a in several] == [200, 200, 429]
        assert several[0].header("RateLimit-Policy") == (
            '"several-1";q=2;w=60, "several-2";q=100;w=3600')
        assert json.loads(several[2].body)["detail"].startswith(
            'too many requests for limit "several-1"')
        admitted, full = fill(server.port, "/bounded")
        assert json.loads(full.body) == {"detail": 'limit "bounded" is tracking as many '
                                                   'clients as it can; retry after 1 second'}
        assert get(server.port, "/bounded", {"X-User": admitted}).status == 200
    with gunicorn_routes(1, {}) as server:
        several = [get(server.port, "/several") for _ in range(3)]
        assert [a.status for a in several] == [200, 200, 429]
        assert several[2].header("RateLimit") == '"several-1";r=0;t=30'
        tier = [get(server.port, "/tier") for _ in range(2)]
        assert [a.status for a in tier] == [200, 429]
        pro = [get(server.port, "/tier", {"X-Plan": "3/minute; 100/hour"}) for _ in range(4)]
        assert [a.status for a in pro] == [200, 200, 200, 429]
        assert pro[0].header("RateLimit-Policy") == '"tier-1";q=3;w=60, "tier-2";q=100;w=3600'
        admitted, full = fill(server.port, "/bounded")
        assert full.body.startswith(b'limit "bounded" is tracking as many clients')
        assert get(server.port, "/bounded", {"X-User": admitted}).status == 200
