"""`HttpLimiter`, the middlewares' native half, called directly: what its options refuse and
why, and how it reads a scope or an environ and hands the verdict back."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from sluicegate import HttpLimiter, Limit

IP: Limit = {"name": "ip", "key": "ip", "quota": "2/minute"}


def scope(client: Optional[List[Any]] = None, headers: Optional[List[Any]] = None,
          **extra: Any) -> Dict[str, Any]:
    return {"type": "http", "method": "GET", "path": "/", "raw_path": b"/",
            "query_string": b"", "headers": headers or [],
            "client": client if client is not None else ["192.0.2.7", 4000], **extra}


@pytest.mark.parametrize("options, error, message", [
    ({"limits": "ip"}, TypeError, "limits must be a list of dicts, got str"),
    ({"limits": []}, ValueError, "a rate-limit layer needs at least one limit"),
    ({"limits": [["ip"]]}, TypeError, "limits[0] must be a dict, got list"),
    ({"limits": [{"key": "ip", "quota": "5/s"}]}, ValueError, 'limits[0] has no "name"'),
    ({"limits": [{"name": "ip", "quota": "5/s"}]}, ValueError, 'limit "ip" has no "key"'),
    ({"limits": [{**IP, "algo": "gcra"}]}, ValueError,
     "limits[0] has an unknown field 'algo'"),
    ({"limits": [{**IP, "quota": "5/fortnight"}]}, ValueError,
     'limit "ip": invalid quota "5/fortnight"'),
    ({"limits": [{**IP, "algorithm": "cell"}]}, ValueError, 'unknown algorithm "cell"'),
    ({"limits": [{**IP, "key": "cookie"}]}, ValueError,
     'unknown key "cookie": expected "ip" (the client\'s address), "global", "header:NAME"'),
    ({"limits": [{**IP, "cost": -1}]}, ValueError, "cost must not be negative, got -1"),
    ({"limits": [IP, IP]}, ValueError, 'two limits are named "ip"'),
    ({"limits": [{**IP, "name": ""}]}, ValueError, "a limit's name must be 1 to 64"),
    ({"limits": [IP], "trusted_proxies": ["10.0.0.0/33"]}, ValueError,
     'trusted_proxies: invalid network "10.0.0.0/33"'),
    ({"limits": [IP], "trusted_proxies": [10]}, TypeError, "must be a str, got int"),
    ({"limits": [IP], "ipv6_prefix": 129}, ValueError, "an IPv6 prefix is 0 to 128 bits"),
    ({"limits": [IP], "trusted_proxies": "10.0.0.0/8, ::1/129"}, ValueError,
     'trusted_proxies: invalid network "::1/129"'),
    ({"limits": [IP], "ipv6_prefix": 300}, ValueError,
     "ipv6_prefix: an IPv6 prefix is 0 to 128 bits, not 300"),
    ({"limits": [IP], "on_backend_error": "maybe"}, ValueError,
     'on_backend_error: expected allow, deny or local, got "maybe"'),
    ({"limits": [IP], "forwarded_headers": "x-real-ip"}, ValueError,
     'forwarded_headers: forwarded headers are x-forwarded-for, forwarded or both, not "x-real-ip"'),
])
def test_bad_options_say_what_is_wrong(options: Dict[str, Any], error: type,
                                       message: str) -> None:
    limits = options.pop("limits")
    with pytest.raises(error) as raised:
        HttpLimiter(limits, **options)
    assert message in str(raised.value)


def passes(limiter: HttpLimiter, peer: str, forwarded: Optional[str] = None,
           header: bytes = b"x-forwarded-for") -> bool:
    """Whether `limiter` lets one request through from `peer`, forwarded for `forwarded`."""
    headers = [] if forwarded is None else [(header, forwarded.encode())]
    return limiter.decide_asgi(scope([peer, 4000], headers)).passes


def test_the_forwarded_header_spellings_are_read_by_the_library_as_node_reads_them() -> None:
    # Each spelling must make the trusted proxy's header name the client: two requests for
    # one client pass, the third is refused, another client still passes. Were the header
    # ignored, every request would count against the proxy's address.
    for forwarded, headers in (("XFF", [b"x-forwarded-for"]),
                               ("X-Forwarded-For", [b"x-forwarded-for"]),
                               ("Forwarded", [b"forwarded"]),
                               ("BOTH", [b"x-forwarded-for", b"forwarded"])):
        limiter = HttpLimiter([IP], trusted_proxies="10.0.0.0/8", forwarded_headers=forwarded)

        def one(client: str) -> bool:
            written = [(name, (f"for={client}" if name == b"forwarded" else client).encode())
                       for name in headers]
            return limiter.decide_asgi(scope(["10.0.0.1", 4000], written)).passes

        assert [one("203.0.113.1") for _ in range(3)] == [True, True, False], forwarded
        assert one("203.0.113.2"), forwarded


def test_the_backend_error_answers_are_read_in_any_case() -> None:
    for answer in ("Allow", "DENY", "local"):
        assert HttpLimiter([IP], on_backend_error=answer).on_backend_error == answer.lower()


@pytest.mark.parametrize("trusted", ["10.0.0.0/8, fd00::/8", ["10.0.0.0/8, fd00::/8", "::1"]])
def test_a_chain_of_trusted_ipv6_proxies_names_the_client(trusted: Any) -> None:
    limiter = HttpLimiter([IP], trusted_proxies=trusted)
    # Two trusted IPv6 hops (the peer fd00::2 and fd00::9 in the header): the client is the
    # address before them, grouped by its /64.
    chain = "2001:db8:1::5, fd00::9"
    assert [passes(limiter, "fd00::2", chain) for _ in range(2)] == [True, True]
    assert not passes(limiter, "fd00::2", "2001:db8:1::6, fd00::9"), "the same /64"
    assert passes(limiter, "fd00::2", "2001:db8:2::5, fd00::9"), "another /64"
    # An untrusted hop in the chain is the client: the addresses before it are not believed.
    assert [passes(limiter, "fd00::2", "2001:db8:1::5, 2001:db8:9::9, fd00::9")
            for _ in range(3)] == [True, True, False]
    # An untrusted peer's header is not believed: its own address is the key.
    assert [passes(limiter, "2001:db8:7::1", "2001:db8:3::1") for _ in range(3)] == [
        True, True, False]
    assert passes(limiter, "2001:db8:8::1", "2001:db8:7::1"), "the header named nobody"
    # IPv4 proxies of the same list are believed alike.
    assert passes(limiter, "10.1.2.3", "198.51.100.4")


def test_a_redis_limiter_checks_its_options_before_any_request() -> None:
    with pytest.raises(ValueError, match="invalid quota"):
        HttpLimiter([{**IP, "quota": "often"}], redis="redis://127.0.0.1:1/")
    assert HttpLimiter([IP], redis="redis://127.0.0.1:1/").remote
    assert not HttpLimiter([IP]).remote


def test_a_pass_sets_its_headers_over_the_apps_and_keeps_the_rest() -> None:
    verdict = HttpLimiter([IP]).decide_asgi(scope())
    assert verdict.passes and bool(verdict) and verdict.status == 0 and verdict.wait == 0.0
    assert verdict.headers == [(b"ratelimit-policy", b'"ip";q=2;w=60'),
                               (b"ratelimit", b'"ip";r=1;t=30')]
    app = [(b"content-type", b"text/plain"), (b"RateLimit", b"the app's own")]
    assert verdict.asgi_headers(app) == [(b"content-type", b"text/plain"), *verdict.headers]
    assert verdict.wsgi_headers([("Content-Type", "text/plain"), ("ratelimit", "x")]) == [
        ("Content-Type", "text/plain"), ("ratelimit-policy", '"ip";q=2;w=60'),
        ("ratelimit", '"ip";r=1;t=30')]


def test_a_refusal_is_the_whole_response() -> None:
    limiter = HttpLimiter([IP])
    limiter.decide_asgi(scope())
    limiter.decide_asgi(scope())
    refused = limiter.decide_asgi(scope())
    assert not refused.passes and refused.status == 429
    assert refused.status_line == "429 Too Many Requests"
    body = b'too many requests for limit "ip"; retry after 30 seconds\n'
    assert refused.body == body
    assert refused.headers == [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"ratelimit-policy", b'"ip";q=2;w=60'), (b"ratelimit", b'"ip";r=0;t=30'),
        (b"retry-after", b"30"), (b"content-length", str(len(body)).encode())]
    # Another client has its own key.
    assert limiter.decide_asgi(scope(client=["192.0.2.8", 4000])).passes


def test_the_wsgi_environ_is_read_as_headers() -> None:
    limiter = HttpLimiter([{"name": "token", "key": "header:x-api-key", "quota": "1/minute"},
                           {"name": "type", "key": "header:content-type", "quota": "9/minute"}])
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/items", "QUERY_STRING": "a=1",
               "REMOTE_ADDR": "192.0.2.7", "HTTP_X_API_KEY": "k-1",
               "CONTENT_TYPE": "application/json"}
    assert limiter.decide_wsgi(environ).passes
    assert limiter.decide_wsgi(environ).status == 429
    missing = limiter.decide_wsgi({**environ, "HTTP_X_API_KEY": ""})
    assert missing.status == 400
    assert missing.body == b'limit "token": the x-api-key header is missing or empty\n'


def test_a_key_function_gets_the_request_and_must_return_a_str_or_none() -> None:
    seen: List[Any] = []

    def user(request: Dict[str, Any]) -> Any:
        seen.append(request)
        return request.get("user")

    limiter = HttpLimiter([{"name": "user", "key": user, "quota": "1/minute"}])
    request = scope(user="alice")
    assert limiter.decide_asgi(request).passes and seen == [request]
    assert limiter.decide_asgi(request).status == 429
    assert limiter.decide_asgi(scope(user="bob")).passes
    assert limiter.decide_asgi(scope(user=None)).status == 400
    with pytest.raises(TypeError, match='the key function of limit "user" returned int'):
        limiter.decide_asgi(scope(user=42))


def test_a_client_that_is_no_ip_address_is_keyed_by_its_name() -> None:
    """Starlette's TestClient says its client is "testclient": the library keys it by that
    name (bounded, odd characters written `_`), never a 500; a key function given the
    client's address gets the name too. A scope without a client (a Unix socket) is "unix"."""
    limiter = HttpLimiter([{**IP, "quota": "1/minute"}])
    assert limiter.decide_asgi(scope(client=["testclient", 50000])).passes
    assert limiter.decide_asgi(scope(client=["testclient", 50001])).status == 429
    assert limiter.decide_asgi(scope(client=["other host", 1])).passes
    assert limiter.reset("testclient") is True and limiter.reset("other_host") is True
    seen = []

    def key(request: Dict[str, Any], client: Optional[str]) -> Optional[str]:
        seen.append(client)
        return client

    keyed = HttpLimiter([{"name": "k", "key": key, "quota": "5/minute"}])
    assert keyed.decide_asgi(scope(client=["testclient", 50000])).passes
    with pytest.warns(RuntimeWarning, match="Unix socket"):
        assert keyed.decide_asgi({**scope(), "client": None}).passes
    assert seen == ["testclient", "unix"]


def test_a_unix_socket_warns_once_and_only_for_limits_keyed_by_the_client() -> None:
    import warnings

    unix = {**scope(), "client": None}  # uvicorn --uds
    by_ip = HttpLimiter([IP])
    with pytest.warns(RuntimeWarning) as caught:
        by_ip.decide_asgi(unix)
        by_ip.decide_wsgi({"REQUEST_METHOD": "GET", "REMOTE_ADDR": ""})
        by_ip.decide_asgi(unix)
    assert len(caught) == 1
    assert str(caught[0].message).startswith(
        'requests arrive on a Unix socket, which has no client address: every limit keyed by '
        'client address counts all of them under the one key "unix"')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Trusted: the proxy's forwarded addresses key each client; no warning.
        HttpLimiter([IP], trusted_proxies=["unix"]).decide_asgi(unix)
        # No limit keyed by the client: nothing is shared by mistake.
        HttpLimiter([{"name": "g", "key": "global", "quota": "5/second"}]).decide_asgi(unix)
        HttpLimiter([{"name": "h", "key": "header:x-api-key", "quota": "5/second"}]
                    ).decide_asgi(unix)


def test_an_ipv6_peer_is_grouped_by_its_prefix() -> None:
    limiter = HttpLimiter([{**IP, "quota": "1/minute"}])
    assert limiter.decide_asgi(scope(client=["2001:db8::1", 1])).passes
    assert limiter.decide_asgi(scope(client=["2001:db8::2", 1])).status == 429
    assert limiter.decide_asgi(scope(client=["2001:db8:0:1::1", 1])).passes
