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

from ._native import HttpLimiter
from .limit import Limit

__all__ = ["Limit", "RateLimitMiddleware"]

ExcInfo = Tuple[Type[BaseException], BaseException, Optional[TracebackType]]
StartResponse = Callable[..., Callable[[bytes], object]]
WSGIApp = Callable[[Dict[str, Any], StartResponse], Iterable[bytes]]


class RateLimitMiddleware:
    """Rate-limits a WSGI app: `app.wsgi_app = RateLimitMiddleware(app.wsgi_app, limits=[...])`
    (Flask) or around Django's `get_wsgi_application()`.

    The options are those of `sluicegate.asgi.RateLimitMiddleware`; a key function gets
    the WSGI environ.
    """

    def __init__(
        self,
        app: WSGIApp,
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

    def __call__(self, environ: Dict[str, Any],
                 start_response: StartResponse) -> Iterable[bytes]:
        verdict = self.limiter.decide_wsgi(environ)
        if not verdict.passes:
            start_response(verdict.status_line, verdict.wsgi_headers())
            return [verdict.body]
        if verdict.wait:
            time.sleep(verdict.wait)

        def start_with_headers(status: str, headers: List[Tuple[str, str]],
                               exc_info: Optional[ExcInfo] = None) -> Callable[[bytes], object]:
            return start_response(status, verdict.wsgi_headers(headers), exc_info)

        return self.app(environ, start_with_headers)
