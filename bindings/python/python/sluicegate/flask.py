"""Per-view limits for Flask: `@limit("5/minute")` under `@app.route(...)`.

```python
from flask import Flask
from sluicegate.flask import limit

app = Flask(__name__)

@app.post("/login")
@limit("5/minute")
def login() -> str: ...
```

A refusal is the library's: a `429` with `Retry-After` and the rate-limit headers; a
passing request's response gets the headers too. The decision, keys, client address and
headers are the library's (the native `HttpLimiter`).
"""

from __future__ import annotations

import functools
import sys
import time
from typing import (TYPE_CHECKING, Any, Callable, Iterable, Optional, Protocol,
                    Sequence, Tuple, TypeVar, Union, cast)

import flask

from ._common import BackendFailureHook, Body, RedisOption, rewrite
from ._native import HttpVerdict
from ._route import Quota, QuotaFunction, RouteLimit, RouteLimits, check_functions

__all__ = ["LimitedView", "ViewLimit", "limit"]

if TYPE_CHECKING:
    from typing_extensions import ParamSpec
elif sys.version_info >= (3, 10):
    from typing import ParamSpec
else:  # Python 3.9: the annotations using it are never evaluated at run time.
    def ParamSpec(name: str) -> Any:
        return TypeVar(name)

Params = ParamSpec("Params")
Returned = TypeVar("Returned", covariant=True)


class LimitedView(Protocol[Params, Returned]):
    """A view `limit(...)` decorated: called as the view was, with the limit's `reset`."""

    limit: RouteLimit
    """The limit shared by every route when `name=` is given, else the one of a request
    whose route is unknown (its native `HttpLimiter` is `limit.limiter`)."""

    limits: RouteLimits
    """Every limiter of this `limit(...)`: one per route without `name=`."""

    def __call__(self, *args: Params.args, **kwargs: Params.kwargs) -> Returned: ...

    def reset(self, key: str) -> bool:
        """Forgets `key` in the limit (every route's, every quota and tier; on Redis, for
        every process sharing it). Returns whether it held a state."""


class ViewLimit:
    """What `limit(...)` returns: a view decorator. With `name=`, the views it decorates share
    one limit; without, each route (its methods and rule, as `"POST /login"`) counts on its
    own. `reset(key)` forgets `key` in every one of them."""

    def __init__(self, limits: RouteLimits, decorate: Callable[[Any], Any]) -> None:
        self._decorate = decorate
        self.limits = limits

    def __call__(self, view: Callable[Params, Returned]) -> LimitedView[Params, Returned]:
        return cast("LimitedView[Params, Returned]", self._decorate(view))

    def reset(self, key: str) -> bool:
        """Forgets `key` in the limit (every route's, every quota and tier; on Redis, for
        every process sharing them): its next request is decided as a new key's. Returns
        whether any held a state."""
        return self.limits.reset(key)


def _route(request: flask.Request) -> Tuple[Any, str, Callable[[], Tuple[Iterable[str], str]]]:
    """The rule a request matched, the path the app is mounted under (`SCRIPT_NAME`), and
    how to describe the rule (its methods and rule string)."""
    rule = request.url_rule

    def describe() -> Tuple[Iterable[str], str]:
        assert rule is not None
        return rule.methods or [request.method], rule.rule

    return rule, request.root_path, describe


def limit(
    quota: Union[Quota, QuotaFunction],
    *,
    key: Union[str, Callable[..., Optional[str]]] = "ip",
    algorithm: Optional[str] = None,
    name: Optional[str] = None,
    cost: int = 1,
    redis: Optional[RedisOption] = None,
    exempt: Optional[Callable[[flask.Request], bool]] = None,
    quotas: Optional[Sequence[str]] = None,
    on_breach: Optional[Callable[[flask.Request, HttpVerdict], Any]] = None,
    headers: Union[str, bool, None] = "standard",
    body: Body = "text",
    content_type: str = "text/plain; charset=utf-8",
    trusted_proxies: Union[str, Sequence[str], None] = None,
    ipv6_prefix: int = 64,
    forwarded_headers: str = "x-forwarded-for",
    redis_cluster: bool = False,
    on_backend_error: str = "allow",
    max_keys: Optional[int] = None,
    on_backend_failure: Optional[BackendFailureHook] = None,
) -> ViewLimit:
    """A decorator limiting a view; the options are `sluicegate.fastapi.limit`'s, with
    Flask's `Request` given to key functions, `quota` functions, `exempt` and `on_breach`.
    Without `name`, each route counts on its own, named after its methods and rule
    (`"POST /login"`); with it, every view decorated shares one limit. With limits on
    Redis, a decision blocks the worker thread with the GIL released. `reset(key)`, on what
    `limit(...)` returns or on the decorated view, forgets a key."""
    check_functions(exempt, on_breach)

    def make(limit_name: str) -> RouteLimit:
        return RouteLimit(quota, name=limit_name, key=key, algorithm=algorithm, cost=cost,
                          quotas=quotas, redis=redis, redis_cluster=redis_cluster,
                          on_backend_error=on_backend_error, trusted_proxies=trusted_proxies,
                          ipv6_prefix=ipv6_prefix, forwarded_headers=forwarded_headers,
                          headers=headers, body=body, max_keys=max_keys,
                          on_backend_failure=on_backend_failure)

    limits = RouteLimits(make, name, "view")

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(view)
        def limited(*args: Any, **kwargs: Any) -> Any:
            request = flask.request._get_current_object()  # type: ignore[attr-defined]
            if exempt is not None and exempt(request):
                return view(*args, **kwargs)
            route = limits.for_route(*_route(request))
            verdict = route.limiter.decide_wsgi(request.environ, request)
            route.decided()
            if not verdict.passes:
                if verdict.status == 429 and on_breach is not None:
                    on_breach(request, verdict)
                verdict = rewrite(verdict, body, content_type, request)
                return flask.Response(verdict.body, status=verdict.status,
                                      headers=verdict.wsgi_headers())
            if verdict.wait:
                time.sleep(verdict.wait)
            response = flask.make_response(view(*args, **kwargs))
            for header, value in verdict.wsgi_headers():
                response.headers[header] = value
            return response

        limited.limit = limits.fallback  # type: ignore[attr-defined]
        limited.limits = limits  # type: ignore[attr-defined]
        limited.reset = limits.reset  # type: ignore[attr-defined]
        return limited

    return ViewLimit(limits, decorate)
