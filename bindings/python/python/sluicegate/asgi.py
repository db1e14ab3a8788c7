"""`RateLimitMiddleware` for ASGI apps (Starlette, FastAPI, Django's ASGI handler).

Every request is decided by the library's one HTTP decision (the native `HttpLimiter`):
client addresses, keys, the all-or-nothing protocol, the headers and the refusals are the
Rust library's, exactly as its tower layer answers. Only `http` scopes are limited;
`websocket` and `lifespan` scopes pass through untouched.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Iterable, MutableMapping, Optional, Union

from ._native import HttpLimiter
from .limit import Limit

__all__ = ["Limit", "RateLimitMiddleware"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class RateLimitMiddleware:
    """Rate-limits an ASGI app: `app.add_middleware(RateLimitMiddleware, limits=[...])`
    (Starlette, FastAPI) or `RateLimitMiddleware(app, limits=[...])`.

    `limits`: dicts `{"name", "key", "quota", "algorithm"?, "cost"?}`, where `key` is
    `"ip"`, `"global"`, `"header:NAME"` or a function of the ASGI scope returning a str (or
    None: the request is then refused with 400). A request goes through only if every limit
    admits it. `trusted_proxies`: networks whose `X-Forwarded-For` is believed for `ip`
    keys (run the server with its own proxy-header handling off: see the README).
    `redis`: a URL (seed nodes separated by commas with `redis_cluster=True`); the limits
    are then shared by every process naming them alike on that Redis. `on_backend_error`:
    `"allow"` (default) or `"deny"` (503 with `Retry-After: 1`) when Redis cannot answer.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        limits: Iterable[Limit],
        trusted_proxies: Union[str, Iterable[str], None] = None,
        ipv6_prefix: int = 64,
        forwarded_headers: str = "x-forwarded-for",
        redis: Optional[str] = None,
        redis_cluster: bool = False,
        on_backend_error: str = "allow",
    ) -> None:
        self.app = app
        self.limiter = HttpLimiter(
            list(limits),
            trusted_proxies=trusted_proxies,
            ipv6_prefix=ipv6_prefix,
            forwarded_headers=forwarded_headers,
            redis=redis,
            redis_cluster=redis_cluster,
            on_backend_error=on_backend_error,
        )
        self._remote = self.limiter.remote

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._remote:
            verdict = await self.limiter.adecide_asgi(scope)
        else:
            verdict = self.limiter.decide_asgi(scope)
        if not verdict.passes:
            await send({"type": "http.response.start", "status": verdict.status,
                        "headers": verdict.headers})
            await send({"type": "http.response.body", "body": verdict.body})
            return
        if verdict.wait:
            await asyncio.sleep(verdict.wait)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = verdict.asgi_headers(message.get("headers"))
            await send(message)

        await self.app(scope, receive, send_with_headers)
