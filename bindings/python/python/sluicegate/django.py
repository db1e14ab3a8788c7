"""Rate limits for Django: `RateLimitMiddleware`, configured by `settings.SLUICEGATE`, and
django-ratelimit's `@ratelimit` decorator.

```python
# settings.py
MIDDLEWARE = [..., "sluicegate.django.RateLimitMiddleware"]
SLUICEGATE = {
    "limits": [{"name": "ip", "key": "ip", "quota": "10/second burst 20"}],
    "trusted_proxies": ["10.0.0.0/8"],
}
```

Every request is decided by the library's one HTTP decision (the native `HttpLimiter`),
from the request's `META` (a WSGI environ under WSGI and ASGI alike): client addresses,
keys, the headers and the refusals are the Rust library's. Key functions, `exempt`,
`on_breach` and a `body` function get the Django request.
"""

from __future__ import annotations

import asyncio
import inspect
import time
import weakref
from typing import Any, Awaitable, Callable, Optional, Union

from asgiref.sync import iscoroutinefunction, markcoroutinefunction

from ._common import MiddlewareBase, Outage, as_list, build, check_callable, rewrite
from ._django_ratelimit import ALL, UNSAFE, Ratelimited, RatelimitedView, ratelimit
from ._django_responses import adecide, refusal, with_headers
from ._django_settings import middleware_options
from ._native import HttpVerdict
from .limit import Limit

__all__ = ["ALL", "UNSAFE", "Limit", "RateLimitMiddleware", "Ratelimited", "RatelimitedView",
           "ratelimit", "reset"]

GetResponse = Callable[[Any], Any]

_middlewares: "weakref.WeakSet[RateLimitMiddleware]" = weakref.WeakSet()
"""The middlewares built in this process (Django builds one per handler), for `reset`."""


def reset(key: str) -> bool:
    """Forgets `key` in every limit of every `RateLimitMiddleware` of this process (on Redis,
    for every process sharing the limits): its next request is decided as a new key's
    (after a successful sign-in, say). `key` is written as the limits write it (a client
    address, a header's value, what a key function returned). Returns whether any held it."""
    held = False
    for middleware in list(_middlewares):
        held = middleware.reset(key) or held
    return held


class RateLimitMiddleware(MiddlewareBase):
    """Django middleware, sync and async capable: add
    `"sluicegate.django.RateLimitMiddleware"` to `MIDDLEWARE`, early (before the middlewares
    whose work a refused request should not cost; after `AuthenticationMiddleware` when a
    key function reads `request.user`), and give its options in `settings.SLUICEGATE`, a
    dict with the keyword arguments of `sluicegate.wsgi.RateLimitMiddleware` (`limits`
    required). `exempt`, `on_breach` and `on_backend_failure` may be dotted paths; a
    limit's `key` may be a dotted path too.

    Under an ASGI server, limits on Redis are awaited, never blocking the event loop (under
    Django's `AsyncClient`, whose scope is not a server's, decided in a worker thread); in
    process, the decision takes microseconds and is made inline.
    """

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: GetResponse) -> None:
        self.get_response = get_response
        self._async = iscoroutinefunction(get_response)
        if self._async:
            markcoroutinefunction(self)
        options = middleware_options()
        exempt = options.pop("exempt", None)
        on_breach = options.pop("on_breach", None)
        on_backend_failure = options.pop("on_backend_failure", None)
        check_callable(exempt, "SLUICEGATE['exempt']")
        check_callable(on_breach, "SLUICEGATE['on_breach']")
        self.exempt: Optional[Callable[[Any], bool]] = exempt
        self.on_breach: Optional[Callable[[Any, HttpVerdict], Any]] = on_breach
        self.body = options.get("body", "text")
        self.content_type: str = options.pop("content_type", "text/plain; charset=utf-8")
        self.limiter = build(
            as_list(options.pop("limits")),
            trusted_proxies=options.get("trusted_proxies"),
            ipv6_prefix=options.get("ipv6_prefix", 64),
            forwarded_headers=options.get("forwarded_headers", "x-forwarded-for"),
            redis=options.get("redis"),
            redis_cluster=options.get("redis_cluster", False),
            on_backend_error=options.get("on_backend_error", "allow"),
            headers=options.get("headers", "standard"),
            body=self.body,
            max_keys=options.get("max_keys"),
        )
        self._remote = self.limiter.remote
        self._outage = Outage(self.limiter, on_backend_failure)
        _middlewares.add(self)

    def __call__(self, request: Any) -> Union[Any, Awaitable[Any]]:
        if self._async:
            return self._acall(request)
        if self.exempt is not None and self.exempt(request):
            return self.get_response(request)
        verdict = self.limiter.decide_wsgi(request.META, request)
        if self._remote:
            self._outage.check()
        if not verdict.passes:
            if verdict.status == 429 and self.on_breach is not None:
                self.on_breach(request, verdict)
            return self._refusal(request, verdict)
        if verdict.wait:
            time.sleep(verdict.wait)
        return with_headers(self.get_response(request), verdict)

    async def _acall(self, request: Any) -> Any:
        if self.exempt is not None and self.exempt(request):
            return await self.get_response(request)
        verdict = await self._adecide(request)
        if not verdict.passes:
            if verdict.status == 429 and self.on_breach is not None:
                called = self.on_breach(request, verdict)
                if inspect.isawaitable(called):
                    await called
            return self._refusal(request, verdict)
        if verdict.wait:
            await asyncio.sleep(verdict.wait)
        return with_headers(await self.get_response(request), verdict)

    async def _adecide(self, request: Any) -> HttpVerdict:
        verdict = await adecide(self.limiter, request)
        if self._remote:
            self._outage.check()
        return verdict

    def _refusal(self, request: Any, verdict: HttpVerdict) -> Any:
        return refusal(rewrite(verdict, self.body, self.content_type, request))
