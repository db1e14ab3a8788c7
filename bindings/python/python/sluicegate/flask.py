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
import time
from typing import Any, Callable, List, Optional, Sequence, TypeVar, Union, cast

import flask

from ._common import Body, rewrite
from ._native import HttpVerdict
from ._route import Quota, QuotaFunction, RouteLimit, check_functions

__all__ = ["ViewLimit", "limit"]

View = TypeVar("View", bound=Callable[..., Any])


class ViewLimit:
    """What `limit(...)` returns: a view decorator. Each view it decorates gets its own limit
    (named after the view unless `name=` is given), reachable as the view's `limit`;
    `reset(key)` forgets `key` in every one of them."""

    def __init__(self, decorate: Callable[[Any], Any]) -> None:
        self._decorate = decorate
        self.limits: List[RouteLimit] = []

    def __call__(self, view: View) -> View:
        limited = self._decorate(view)
        self.limits.append(limited.limit)
        return cast(View, limited)

    def reset(self, key: str) -> bool:
        """Forgets `key` in the limits of every view decorated (every quota and tier; on
        Redis, for every process sharing them): its next request is decided as a new key's.
        Returns whether any held a state."""
        held = False
        for route in self.limits:
            held = route.reset(key) or held
        return held


def limit(
    quota: Union[Quota, QuotaFunction],
    *,
    key: Union[str, Callable[..., Optional[str]]] = "ip",
    algorithm: Optional[str] = None,
    name: Optional[str] = None,
    cost: int = 1,
    redis: Optional[str] = None,
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
) -> ViewLimit:
    """A decorator limiting a view; the options are `sluicegate.fastapi.limit`'s, with
    Flask's `Request` given to key functions, `quota` functions, `exempt` and `on_breach`.
    `name` defaults to the view function's name. With limits on Redis, a decision blocks
    the worker thread with the GIL released. `reset(key)`, on what `limit(...)` returns or
    on the decorated view, forgets a key."""
    check_functions(exempt, on_breach)

    def decorate(view: View) -> View:
        route = RouteLimit(quota, name=name or view.__name__, key=key, algorithm=algorithm,
                           cost=cost, quotas=quotas, redis=redis, redis_cluster=redis_cluster,
                           on_backend_error=on_backend_error,
                           trusted_proxies=trusted_proxies, ipv6_prefix=ipv6_prefix,
                           forwarded_headers=forwarded_headers, headers=headers, body=body,
                           max_keys=max_keys)

        @functools.wraps(view)
        def limited(*args: Any, **kwargs: Any) -> Any:
            request = flask.request._get_current_object()  # type: ignore[attr-defined]
            if exempt is not None and exempt(request):
                return view(*args, **kwargs)
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

        limited.limit = route  # type: ignore[attr-defined]
        limited.reset = route.reset  # type: ignore[attr-defined]
        return cast(View, limited)

    return ViewLimit(decorate)
