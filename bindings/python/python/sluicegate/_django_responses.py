"""The library's verdicts as Django responses, and a decision awaited under ASGI: shared by
`sluicegate.django`'s middleware and `@ratelimit`. The status, headers and body are the
verdict's (the native `HttpVerdict`); nothing here writes a header of its own."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpResponse  # type: ignore[import-untyped, unused-ignore]

from ._native import HttpLimiter, HttpVerdict


def refusal(verdict: HttpVerdict) -> Any:
    """The library's refusal as a Django `HttpResponse`: its status, headers and body."""
    response = HttpResponse(verdict.body, status=verdict.status)
    for name, value in verdict.wsgi_headers():
        response[name] = value
    return response


def with_headers(response: Any, verdict: HttpVerdict) -> Any:
    """`response` with the verdict's rate-limit headers set (a `429` from a limit inside,
    already carrying its own, left as it is: the library's rule)."""
    for name, value in verdict.wsgi_headers(list(response.items()), response.status_code):
        response[name] = value
    return response


async def adecide(limiter: HttpLimiter, request: Any) -> HttpVerdict:
    """`limiter`'s verdict for a Django request in an async view or middleware: in process,
    at once (microseconds); on Redis, awaited from the request's ASGI scope, never blocking
    the event loop (in a worker thread for a request without a server's scope)."""
    if not limiter.remote:
        return limiter.decide_wsgi(request.META, request)
    scope = getattr(request, "scope", None)
    # A server's scope; Django's AsyncClient writes its query string as a str, not bytes.
    if isinstance(scope, dict) and scope.get("type") == "http" and isinstance(
            scope.get("query_string", b""), bytes):
        return await limiter.adecide_asgi(scope, request)
    decide = sync_to_async(limiter.decide_wsgi, thread_sensitive=False)
    return await decide(request.META, request)
