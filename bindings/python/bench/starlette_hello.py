"""The Starlette hello world that `middleware.py` serves through uvicorn, behind the rate
limiter `SLUICEGATE_BENCH_MIDDLEWARE` names: `none`, `sluicegate` (the ASGI middleware, one
in-process limit keyed by the client IP) or `slowapi` (its pure ASGI middleware, one default
limit keyed by the client IP, memory storage, rate-limit headers on). The quota is generous:
every request passes, so each measures what the limiter adds to a request it admits."""

from __future__ import annotations

import os

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

QUOTA = "1000000/second"


async def hello(request: Request) -> PlainTextResponse:
    return PlainTextResponse("Hello, world!")


app = Starlette(routes=[Route("/", hello)])

chosen = os.environ["SLUICEGATE_BENCH_MIDDLEWARE"]
if chosen == "sluicegate":
    from sluicegate.asgi import RateLimitMiddleware

    app.add_middleware(RateLimitMiddleware,
                       limits=[{"name": "ip", "key": "ip", "quota": QUOTA}])
elif chosen == "slowapi":
    from slowapi import Limiter
    from slowapi.middleware import SlowAPIASGIMiddleware
    from slowapi.util import get_remote_address

    app.state.limiter = Limiter(key_func=get_remote_address, default_limits=[QUOTA],
                                headers_enabled=True)
    app.add_middleware(SlowAPIASGIMiddleware)
elif chosen != "none":
    raise SystemExit(f"SLUICEGATE_BENCH_MIDDLEWARE is none, sluicegate or slowapi, not {chosen}")
