"""`RateLimitMiddleware` for WSGI apps (Flask, Django's WSGI handler).

Every request is decided by the library's one HTTP decision (the native `HttpLimiter`):
client addresses, keys, the all-or-nothing protocol, the headers and the refusals are the
Rust library's, exactly as its tower layer answers. With limits on Redis, a decision blocks
its worker thread with the GIL released, so other threads run meanwhile.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Type, Union

from ._common import (Body, BackendFailureHook, MiddlewareBase, Outage, RedisOption, as_list,
                      build, check_callable, rewrite)
from ._native import HttpVerdict
from .limit import Limit

__all__ = ["Limit", "RateLimitMiddleware"]

ExcInfo = Tuple[Type[BaseException], BaseException, Optional[TracebackType]]
StartResponse = Callable[..., Callable[[bytes], object]]
WSGIApp = Callable[[Dict[str, Any], StartResponse], Iterable[bytes]]


class RateLimitMiddleware(MiddlewareBase):
    """Rate-limits a WSGI app: `app.wsgi_app = RateLimitMiddleware(app.wsgi_app, limits=[...])`
    (Flask) or around Django's `get_wsgi_application()`.

    The options are those of `sluicegate.asgi.RateLimitMiddleware`; a key function,
    `exempt`, `on_breach` and a `body` function get the WSGI environ.
    """

    def __init__(
        self,
        app: WSGIApp,
        *,
        limits: Iterable[Limit],
        trusted_proxies: Union[str, Iterable[str], None] = None,
        ipv6_prefix: int = 64,
        forwarded_headers: str = "x-forwarded-for",
        redis: Optional[RedisOption] = None,
        redis_cluster: bool = False,
        on_backend_error: str = "allow",
        exempt: Optional[Callable[[Dict[str, Any]], bool]] = None,
        on_breach: Optional[Callable[[Dict[str, Any], HttpVerdict], Any]] = None,
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

    def __call__(self, environ: Dict[str, Any],
                 start_response: StartResponse) -> Iterable[bytes]:
        if self.exempt is not None and self.exempt(environ):
            return self.app(environ, start_response)
        verdict = self.limiter.decide_wsgi(environ)
        if self._remote:
            self._outage.check()
        if not verdict.passes:
            if verdict.status == 429:
                if self.on_breach is not None:
                    self.on_breach(environ, verdict)
                verdict = rewrite(verdict, self.body, self.content_type, environ)
            start_response(verdict.status_line, verdict.wsgi_headers())
            return [verdict.body]
        if verdict.wait:
            time.sleep(verdict.wait)

        def start_with_headers(status: str, headers: List[Tuple[str, str]],
                               exc_info: Optional[ExcInfo] = None) -> Callable[[bytes], object]:
            # A 429 from a limit inside the app keeps that limit's headers.
            return start_response(status, verdict.wsgi_headers(headers, status), exc_info)

        return self.app(environ, start_with_headers)
