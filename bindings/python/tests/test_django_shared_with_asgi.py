"""One limit on one real redis-server, shared by Django (`sluicegate.django`'s middleware,
under Django's test `Client`, from 127.0.0.1) and another process naming it alike (the ASGI
middleware, Starlette under uvicorn; the Rust `http_server` example's tower layer), over real
HTTP from 127.0.0.1: they take turns against it, and each sees the other's requests."""

from __future__ import annotations

from typing import Any, List, Tuple

import django_setup  # noqa: F401  (configures Django before its test tools are imported)
from django.test import Client, override_settings

from conftest import RedisServer
from http_servers import get, http_server, policy, until_decided_on_redis, uvicorn


def test_django_and_an_asgi_app_share_one_limit(redis_server: RedisServer,
                                                prefix: str) -> None:
    limit = {"name": f"{prefix}shared", "key": "ip", "quota": "4/minute"}
    settings = override_settings(MIDDLEWARE=["sluicegate.django.RateLimitMiddleware"],
                                 SLUICEGATE={"limits": [limit], "redis": redis_server.url})
    with settings, uvicorn("starlette_app", {"limits": [limit],
                                             "redis": redis_server.url}) as asgi:
        django = Client()

        def from_django() -> Tuple[int, Any]:
            answer = django.get("/")
            return answer.status_code, answer.get("RateLimit")

        def from_asgi() -> Tuple[int, Any]:
            answer = get(asgi.port)
            return answer.status, answer.header("RateLimit")

        turns = [from_django, from_asgi, from_django, from_asgi, from_asgi, from_django]
        answers: List[Tuple[int, Any]] = [turn() for turn in turns]
    assert [status for status, _ in answers] == [200, 200, 200, 200, 429, 429]
    name = f'"{prefix}shared"'
    assert [header[:len(name) + 4] for _, header in answers[:4]] == [
        f"{name};r=3", f"{name};r=2", f"{name};r=1", f"{name};r=0"]
    keys = redis_server.cli("--scan", "--pattern", f"sluicegate:http:{prefix}shared:*").split()
    assert len(keys) == 1 and "127.0.0.1" in keys[0], keys


def test_django_and_a_rust_process_share_one_limit(redis_server: RedisServer,
                                                   prefix: str) -> None:
    name = f"{prefix}rust".replace(":", "-")
    limit = {"name": name, "key": "ip", "quota": "4/minute"}
    settings = override_settings(MIDDLEWARE=["sluicegate.django.RateLimitMiddleware"],
                                 SLUICEGATE={"limits": [limit], "redis": redis_server.url})
    with settings, http_server([policy(limit)], "--redis", redis_server.url) as rust:
        until_decided_on_redis(rust.port)  # its probes come from 127.0.0.99: another key
        django = Client()
        answers = []
        for turn in ["django", "rust", "django", "rust", "rust", "django"]:
            if turn == "django":
                answer = django.get("/")
                answers.append((answer.status_code, answer.get("RateLimit")))
            else:
                reply = get(rust.port)
                answers.append((reply.status, reply.header("RateLimit")))
    assert [status for status, _ in answers] == [200, 200, 200, 200, 429, 429]
    quoted = f'"{name}"'
    assert [header[:len(quoted) + 4] for _, header in answers[:4]] == [
        f"{quoted};r=3", f"{quoted};r=2", f"{quoted};r=1", f"{quoted};r=0"]
