"""Whose address keys an `ip` limit: the peer's, unless the peer is a trusted proxy; the
middleware's trusted-proxy rule (the library's) is the only one when the server runs with
its own proxy handling off, as the README says to run it. Answers compared with the Rust
`http_server`'s for the same requests."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import pytest

from http_servers import gunicorn, get, http_server, policy, uvicorn

ONE_A_MINUTE = {"name": "ip", "key": "ip", "quota": "1/minute"}


def statuses_from(port: int, forwarded: Sequence[Optional[str]], source: str = "127.0.0.1",
                  ) -> List[int]:
    """One request per entry, sending it as X-Forwarded-For (None: no header)."""
    return [get(port, headers={} if xff is None else {"X-Forwarded-For": xff},
                source=source).status for xff in forwarded]


def rust_statuses(options: Dict[str, Any], forwarded: Sequence[Optional[str]]) -> List[int]:
    flags = ["--forwarded-header", "x-forwarded-for"]
    trusted = options.get("trusted_proxies", [])
    for network in [trusted] if isinstance(trusted, str) else trusted:
        flags += ["--trusted-proxy", network]
    if "ipv6_prefix" in options:
        flags += ["--ipv6-prefix", str(options["ipv6_prefix"])]
    with http_server([policy(limit) for limit in options["limits"]], *flags) as rust:
        return statuses_from(rust.port, forwarded)


@pytest.mark.parametrize("app", ["starlette_app", "fastapi_app"])
def test_a_spoofed_x_forwarded_for_is_ignored_without_trusted_proxies(app: str) -> None:
    options = {"limits": [ONE_A_MINUTE]}
    forwarded = ["203.0.113.1", "203.0.113.2", None]
    with uvicorn(app, options) as server:
        assert statuses_from(server.port, forwarded) == [200, 429, 429]
        # Another peer (127.0.0.2) has a key of its own.
        assert statuses_from(server.port, ["203.0.113.1"], source="127.0.0.2") == [200]
    assert rust_statuses(options, forwarded) == [200, 429, 429]


def test_a_trusted_proxys_x_forwarded_for_names_the_client() -> None:
    options = {"limits": [ONE_A_MINUTE], "trusted_proxies": ["127.0.0.1"]}
    forwarded = ["203.0.113.1", "203.0.113.2", "203.0.113.1", "198.51.100.9, 203.0.113.2"]
    expected = [200, 200, 429, 429]
    with uvicorn("starlette_app", options) as server:
        assert statuses_from(server.port, forwarded) == expected
        # 127.0.0.2 is no trusted proxy: it is the client, whatever it forwards.
        assert statuses_from(server.port, ["203.0.113.7", "203.0.113.8"],
                             source="127.0.0.2") == [200, 429]
    assert rust_statuses(options, forwarded) == expected


@pytest.mark.parametrize("prefix, expected", [(64, [200, 429, 200, 429]),
                                              (128, [200, 200, 200, 429])])
def test_ipv6_clients_are_grouped_by_prefix(prefix: int, expected: List[int]) -> None:
    options = {"limits": [ONE_A_MINUTE], "trusted_proxies": "127.0.0.1",
               "ipv6_prefix": prefix}
    forwarded = ["2001:db8::1", "2001:db8::ffff", "2001:db8:0:1::1", "2001:db8::1"]
    with uvicorn("fastapi_app", options) as server:
        assert statuses_from(server.port, forwarded) == expected
    assert rust_statuses(options, forwarded) == expected


def test_an_ipv4_mapped_address_is_the_ipv4_client() -> None:
    options = {"limits": [ONE_A_MINUTE], "trusted_proxies": ["127.0.0.1"]}
    forwarded = ["::ffff:198.51.100.7", "198.51.100.7", "[::ffff:198.51.100.8]:4000"]
    expected = [200, 429, 200]
    with uvicorn("starlette_app", options) as server:
        assert statuses_from(server.port, forwarded) == expected
    assert rust_statuses(options, forwarded) == expected


def test_uvicorns_default_proxy_headers_would_let_a_local_client_pick_its_key() -> None:
    """Why the README says `--no-proxy-headers`: by default uvicorn believes
    X-Forwarded-For from 127.0.0.1 and rewrites the client address before any middleware
    sees it, so each spoofed address gets a fresh limit."""
    with uvicorn("starlette_app", {"limits": [ONE_A_MINUTE]}, "--proxy-headers") as server:
        assert statuses_from(server.port, ["203.0.113.1", "203.0.113.2"]) == [200, 200]


def test_gunicorn_gives_the_peer_address_and_a_spoof_is_ignored() -> None:
    with gunicorn({"limits": [ONE_A_MINUTE]}, 1) as server:
        assert statuses_from(server.port, ["203.0.113.1", "203.0.113.2"]) == [200, 429]
        assert statuses_from(server.port, [None], source="127.0.0.3") == [200]
    with gunicorn({"limits": [ONE_A_MINUTE], "trusted_proxies": ["127.0.0.1"]}, 1) as server:
        assert statuses_from(server.port, ["203.0.113.1", "203.0.113.2", "203.0.113.1"]) == [
            200, 200, 429]
