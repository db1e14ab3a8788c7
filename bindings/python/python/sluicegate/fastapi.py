"""Per-route limits for FastAPI: `dependencies=[Depends(limit("5/minute"))]` on a route, or
on a router for all of its routes.

```python
from fastapi import Depends, FastAPI
from sluicegate.fastapi import limit

app = FastAPI()

@app.post("/login", dependencies=[Depends(limit("5/minute"))])
async def login() -> dict: ...
```

The route stays in OpenAPI. A refusal is FastAPI's `HTTPException` (`RateLimitExceeded`):
a `429` with `{"detail": ...}`, `Retry-After` and the rate-limit headers; a passing request's
response gets the headers too (unless the route returns a `Response` object itself). The
decision, keys, client address and headers are the library's (the native `HttpLimiter`).
"""

import asyncio
import inspect
import json
import time
from typing import (Any, Awaitable, Callable, Iterable, Optional, Protocol, Sequence, Tuple,
                    Union, cast)

from fastapi import HTTPException, Request, Response

from ._common import BackendFailureHook, Body, RedisOption, rewrite
from ._native import HttpVerdict
from ._route import Quota, QuotaFunction, RouteLimit, RouteLimits, check_functions

__all__ = ["RateLimitDependency", "RateLimitExceeded", "limit", "rate_limit_exceeded_handler"]


class RateLimitDependency(Protocol):
    """What `limit(...)` returns: a FastAPI dependency, with `reset` and `areset`."""

    limit: RouteLimit
    """The limit shared by every route when `name=` is given, else the one of a request
    whose route is unknown (its native `HttpLimiter` is `limit.limiter`)."""

    limits: RouteLimits
    """Every limiter of this `limit(...)`: one per route without `name=`."""

    def __call__(self, request: Request, response: Response) -> Awaitable[None]: ...

    def reset(self, key: str) -> bool:
        """Forgets `key` in this limit (every quota and tier of it; on Redis, for every
        process sharing it): its next request is decided as a new key's. Returns whether it
        held a state."""

    def areset(self, key: str) -> Awaitable[bool]:
        """`reset` for an event loop (with `redis=`, it never blocks the loop)."""


class RateLimitExceeded(HTTPException):
    """A refused request: `status_code` 429 (or 400 without its key, 503 when Redis cannot
    answer and errors deny), `detail` the library's sentence, `headers` its `Retry-After`
    and rate-limit headers. `verdict` is the decision; `response` the refusal as the
    library wrote it (with `body=`), which `rate_limit_exceeded_handler` sends."""

    def __init__(self, verdict: HttpVerdict, detail: str) -> None:
        headers = {name.decode("latin-1"): value.decode("latin-1")
                   for name, value in verdict.headers
                   if name not in (b"content-type", b"content-length")}
        super().__init__(status_code=verdict.status, detail=detail, headers=headers)
        self.verdict = verdict
        response = Response(content=verdict.body, status_code=verdict.status)
        response.raw_headers = list(verdict.headers)
        self.response = response


async def rate_limit_exceeded_handler(request: Request, exc: Exception) -> Response:
    """`app.add_exception_handler(RateLimitExceeded, rate_limit_exceeded_handler)`: refusals
    are then sent with the body `body=` chose (the library's text, problem+json, or yours)
    instead of FastAPI's `{"detail": ...}`."""
    assert isinstance(exc, RateLimitExceeded)
    return exc.response


def _sentence(verdict: HttpVerdict) -> str:
    body = verdict.body.decode("utf-8", "replace")
    if body.startswith("{"):
        try:
            return str(json.loads(body)["detail"])
        except (ValueError, KeyError):
            return body
    return body.rstrip("\n")


MISUSED = ("limit(...) is a FastAPI dependency, not a decorator: use `Depends(limit(...))`, "
           "as in @app.get(\"/path\", dependencies=[Depends(limit(\"5/minute\"))])")


def _route(request: Request) -> Tuple[Any, str, Callable[[], Tuple[Iterable[str], str]]]:
    """The route a request matched (an object standing for it), the path the app is mounted
    under, and how to describe the route (its methods and path template)."""
    scope = request.scope
    route = scope.get("route")
    # FastAPI versions that route through an included router without copying its routes
    # keep the route as declared, and the path it is reached by, in this context.
    context = scope.get("fastapi", {}).get("effective_route_context") \
        if isinstance(scope.get("fastapi"), dict) else None
    template = getattr(context, "path_format", None)

    def describe() -> Tuple[Iterable[str], str]:
        methods = getattr(route, "methods", None) or [scope.get("method", "GET")]
        return methods, template or getattr(route, "path_format", None) or \
            getattr(route, "path", "") or scope.get("path", "")

    return (context if template else route), str(scope.get("root_path") or ""), describe


class _Dependency:
    """What `limit(...)` returns. FastAPI reads its signature, `(request, response)`, from
    `__wrapped__` and awaits it; a version of FastAPI that does not follow `__wrapped__`
    runs it in its thread pool, where it decides as a blocking call. Used as a decorator,
    it raises a `TypeError` saying how to use it."""

    def __init__(self, limits: RouteLimits, exempt: Optional[Callable[[Request], bool]],
                 on_breach: Optional[Callable[[Request, HttpVerdict], Any]], body: Body,
                 content_type: str) -> None:
        self.limits = limits
        self.limit = limits.fallback
        self.exempt = exempt
        self.on_breach = on_breach
        self.body = body
        self.content_type = content_type
        self.__wrapped__ = self._decide

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and callable(args[0]) \
                and not isinstance(args[0], Request):
            raise TypeError(MISUSED)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._decide_blocking(*args, **kwargs)
        return self._decide(*args, **kwargs)

    def reset(self, key: str) -> bool:
        """Forgets `key` in this limit (every route's, every quota and tier; on Redis, for
        every process sharing it). Returns whether it held a state."""
        return self.limits.reset(key)

    async def areset(self, key: str) -> bool:
        """`reset` for an event loop."""
        return await self.limits.areset(key)

    def _limiter(self, request: Request) -> RouteLimit:
        if self.limits.named:
            return self.limits.fallback
        return self.limits.for_route(*_route(request))

    def _refusal(self, request: Request, verdict: HttpVerdict) -> RateLimitExceeded:
        return RateLimitExceeded(rewrite(verdict, self.body, self.content_type, request),
                                 _sentence(verdict))

    async def _decide(self, request: Request, response: Response) -> None:
        if self.exempt is not None and self.exempt(request):
            return
        route = self._limiter(request)
        limiter = route.limiter
        if limiter.remote:
            verdict = await limiter.adecide_asgi(request.scope, request)
            route.decided()
        else:
            verdict = limiter.decide_asgi(request.scope, request)
        if not verdict.passes:
            if verdict.status == 429 and self.on_breach is not None:
                called = self.on_breach(request, verdict)
                if inspect.isawaitable(called):
                    await called
            raise self._refusal(request, verdict)
        if verdict.wait:
            await asyncio.sleep(verdict.wait)
        for header, value in verdict.wsgi_headers():
            response.headers[header] = value

    def _decide_blocking(self, request: Request, response: Response) -> None:
        if self.exempt is not None and self.exempt(request):
            return
        route = self._limiter(request)
        verdict = route.limiter.decide_asgi(request.scope, request)
        route.decided()
        if not verdict.passes:
            if verdict.status == 429 and self.on_breach is not None:
                called = self.on_breach(request, verdict)
                if inspect.isawaitable(called):
                    import anyio.from_thread
                    anyio.from_thread.run(_awaited, called)
            raise self._refusal(request, verdict)
        if verdict.wait:
            time.sleep(verdict.wait)
        for header, value in verdict.wsgi_headers():
            response.headers[header] = value


async def _awaited(awaitable: Awaitable[Any]) -> None:
    await awaitable


def limit(
    quota: Union[Quota, QuotaFunction],
    *,
    key: Union[str, Callable[..., Optional[str]]] = "ip",
    algorithm: Optional[str] = None,
    name: Optional[str] = None,
    cost: int = 1,
    redis: Optional[RedisOption] = None,
    exempt: Optional[Callable[[Request], bool]] = None,
    quotas: Optional[Sequence[str]] = None,
    on_breach: Optional[Callable[[Request, HttpVerdict], Any]] = None,
    headers: Union[str, bool, None] = "standard",
    body: Body = "json",
    content_type: str = "application/json",
    trusted_proxies: Union[str, Sequence[str], None] = None,
    ipv6_prefix: int = 64,
    forwarded_headers: str = "x-forwarded-for",
    redis_cluster: bool = False,
    on_backend_error: str = "allow",
    max_keys: Optional[int] = None,
    on_backend_failure: Optional[BackendFailureHook] = None,
) -> RateLimitDependency:
    """A dependency limiting the routes it is added to: `Depends(limit("5/minute"))`.

    `quota`: a quota string (several in one, `"5/minute; 100/hour"`, are decided
    all-or-nothing, named `NAME-1`, `NAME-2`...), a list of them (likewise), or a function of
    the request returning one of `quotas` (each a tier with its own tables). `key`: `"ip"`
    (through `trusted_proxies` only), `"global"`, `"header:NAME"`, or a function of the
    `Request` (and, if it takes two arguments, the client's address as the trusted-proxy
    rules resolved it) returning a str, or None (then 400). `name` names the limit in the
    headers and on Redis, and makes it one limit for every route it is added to; without
    it, each route counts on its own, named after its methods and path template
    (`"POST /login"`). `exempt(request)`: true lets the request through uncounted.
    `on_breach(request, verdict)`: called on each 429 (may be async). `max_keys` (default
    1,000,000) bounds each in-process keyed table (a new key while it is full: `503`,
    `Retry-After: 1`). The other options are the middleware's. `.reset(key)` (or `await
    .areset(key)`) forgets a key in it. Not a decorator: `@limit(...)` on a route raises a
    `TypeError` saying to write `Depends(limit(...))`.
    """
    check_functions(exempt, on_breach)

    def make(limit_name: str) -> RouteLimit:
        return RouteLimit(quota, name=limit_name, key=key, algorithm=algorithm, cost=cost,
                          quotas=quotas, redis=redis, redis_cluster=redis_cluster,
                          on_backend_error=on_backend_error, trusted_proxies=trusted_proxies,
                          ipv6_prefix=ipv6_prefix, forwarded_headers=forwarded_headers,
                          headers=headers, body=body, max_keys=max_keys,
                          on_backend_failure=on_backend_failure)

    return cast(RateLimitDependency,
                _Dependency(RouteLimits(make, name, "route"), exempt, on_breach, body,
                            content_type))
