"""`RateLimitMiddleware` for ASGI apps (Starlette, FastAPI, Django's ASGI handler).

Every request is decided by the library's one HTTP decision (the native `HttpLimiter`):
client addresses, keys, the all-or-nothing protocol, the headers and the refusals are the
Rust library's, exactly as its tower layer answers. Only `http` scopes are limited;
`websocket` and `lifespan` scopes pass through untouched.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Awaitable, Callable, Iterable, MutableMapping, Optional, Union

from ._common import (Body, BackendFailureHook, MiddlewareBase, Outage, RedisOption, as_list,
                      build, check_callable, rewrite)
from ._native import HttpVerdict
from .limit import Limit

__all__ = ["Limit", "RateLimitMiddleware"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class RateLimitMiddleware(MiddlewareBase):
    """Rate-limits an ASGI app: `app.add_middleware(RateLimitMiddleware, limits=[...])`
    (Starlette, FastAPI) or `RateLimitMiddleware(app, limits=[...])`.

    `limits`: dicts `{"name", "key", "quota", "algorithm"?, "cost"?}`, where `key` is
    `"ip"`, `"global"`, `"header:NAME"` or a function of the ASGI scope returning a str (or
    None: the request is then refused with 400). A request goes through only if every limit
    admits it. `trusted_proxies`: networks whose `X-Forwarded-For` is believed for `ip`
    keys (run the server with its own proxy-header handling off: see the README).
    `redis`: a URL (seed nodes separated by commas with `redis_cluster=True`); the limits
    are then shared by every process naming them alike on that Redis. `on_backend_error`:
    `"allow"` (default), `"deny"` (503 with `Retry-After: 1`) or `"local"` (decided in
    this process until Redis answers again) when Redis cannot answer; each outage is logged
    (logger `sluicegate`, a warning at most every 10 seconds, and one when Redis decides
    again), reported to `on_backend_failure` (a function of a `sluicegate.BackendFailure`,
    called where each warning is logged) and counted (`backend_errors`).

    `exempt`: a function of the scope; true lets the request through uncounted, without
    headers. `on_breach(scope, verdict)`: called on each `429` (may be async). `headers`:
    `"standard"` (default), `"legacy"` (`X-RateLimit-*`), `"both"` or `False`. `body`:
    `"text"` (default), `"json"` (`{"detail": ...}`), `"problem+json"`, or a function of
    the scope and the verdict returning a 429's body, sent as `content_type`.

    A limit's `quota` may hold several quotas (`"5/minute; 100/hour"`), decided
    all-or-nothing, or be a function of the scope returning one of its `quotas` (tiers).
    `max_keys` (default 1,000,000) bounds each in-process keyed table: while one is full of
    active keys, a new key is answered `503` with `Retry-After: 1`. `reset(key)` (and
    `await areset(key)`) forgets a key in every limit.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        limits: Iterable[Limit],
        trusted_proxies: Union[str, Iterable[str], None] = None,
        ipv6_prefix: int = 64,
        forwarded_headers: str = "x-forwarded-for",
        redis: Optional[RedisOption] = None,
        redis_cluster: bool = False,
        on_backend_error: str = "allow",
        exempt: Optional[Callable[[Scope], bool]] = None,
        on_breach: Optional[Callable[[Scope, HttpVerdict], Any]] = None,
        headers: Union[str, bool, None] = "standard",
        body: Body = "text",
        content_type: str = "text/plain; charset=utf-8",
        max_keys: Optional[int] = None,
        on_backend_failure: Optional[BackendFailureHook] = None,
    ) -> None:
        check_callable(exempt, "exempt")
        check_callable(on_breach, "on_breach")
        self.app = app
        self.limiter = build(
            as_list(limits),
            trusted_proxies=trusted_proxies,
            ipv6_prefix=ipv6_prefix,
            forwarded_headers=forwarded_headers,
            redis=redis,
            redis_cluster=redis_cluster,
            on_backend_error=on_backend_error,
            headers=headers,
            body=body,
            max_keys=max_keys,
        )
        self.exempt = exempt
        self.on_breach = on_breach
        self.body = body
        self.content_type = content_type
        self._remote = self.limiter.remote
        self._outage = Outage(self.limiter, on_backend_failure)

    async def areset(self, key: str) -> bool:
        """`reset` for an event loop: with limits on Redis it never blocks the loop."""
        return await self.limiter.areset(key)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (self.exempt is not None and self.exempt(scope)):
            await self.app(scope, receive, send)
            return
        if self._remote:
            verdict = await self.limiter.adecide_asgi(scope)
            self._outage.check()
        else:
            verdict = self.limiter.decide_asgi(scope)
        if not verdict.passes:
            if verdict.status == 429:
                if self.on_breach is not None:
                    called = self.on_breach(scope, verdict)
                    if inspect.isawaitable(called):
                        await called
                verdict = rewrite(verdict, self.body, self.content_type, scope)
            await send({"type": "http.response.start", "status": verdict.status,
                        "headers": verdict.headers})
            await send({"type": "http.response.body", "body": verdict.body})
            return
        if verdict.wait:
            await asyncio.sleep(verdict.wait)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                # A 429 from a limit inside the app keeps that limit's headers.
                message["headers"] = verdict.asgi_headers(message.get("headers"),
                                                          message.get("status"))
            await send(message)

        await self.app(scope, receive, send_with_headers)
