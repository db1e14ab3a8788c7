"""What a user of the package writes, for `mypy --strict` (test_package.py checks it): the
waiting methods, the route helpers and the middlewares' options, `reset` everywhere,
several quotas in one string, quota functions on the middlewares' limits, `max_keys`, a
Flask view's `reset` on the decorated view, `sluicegate.__version__`."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Dict, List, MutableMapping, Optional

from fastapi import APIRouter, Depends, FastAPI, Request
from flask import Flask

import sluicegate
from sluicegate import BackendFailure, Decision, HttpVerdict, KeyedLimiter, Limit, Limiter, RedisLimiter
from sluicegate.asgi import RateLimitMiddleware
from sluicegate.fastapi import (RateLimitDependency, RateLimitExceeded, limit,
                                rate_limit_exceeded_handler)
from sluicegate.flask import ViewLimit
from sluicegate.flask import limit as flask_limit
from sluicegate.wsgi import RateLimitMiddleware as WsgiMiddleware

per_host = KeyedLimiter("10/second")
one = Limiter("5/second")


async def fetch_all() -> None:
    async with per_host.acquire("example.org") as decision:
        remaining: int = decision.remaining
    admitted: Decision = await one.acquire(cost=2)
    print(remaining, admitted.allowed)


def blocking() -> Optional[Decision]:
    return per_host.wait("example.org", timeout=1.5)


async def on_redis(url: str) -> bool:
    async with RedisLimiter("5/second", url=url) as shared:
        first = await shared.acquire("user:1")
        forgotten: bool = await shared.areset("user:1")
        again: bool = shared.reset("user:1")
        return first.allowed and forgotten and not again


def plan(request: Request) -> str:
    return "100/minute" if request.headers.get("x-plan") == "pro" else "5/minute"


def by_client(request: Request, client: Optional[str]) -> Optional[str]:
    return None if client is None else f"{client} {request.url.path}"


def breach(request: Request, verdict: HttpVerdict) -> None:
    logging.getLogger("app").warning("%s over %s", request.url.path, verdict.limit)


def scope_plan(scope: Dict[str, Any]) -> str:
    return "100/minute" if scope["path"].startswith("/pro") else "5/minute; 50/hour"


limits: List[Limit] = [
    {"name": "ip", "key": "ip", "quota": "5/minute; 100/hour"},
    {"name": "plan", "key": "ip", "quota": scope_plan,
     "quotas": ["5/minute; 50/hour", "100/minute"]},
]


async def asgi_app(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
    return None


def page(report: BackendFailure) -> None:
    logging.getLogger("app").error("Redis failing for %s: %d", report.limits, report.failed)


middleware = RateLimitMiddleware(asgi_app, limits=limits, max_keys=100_000,
                                 on_backend_failure=page)


async def unblock(client: str) -> bool:
    return middleware.reset(client) or await middleware.areset(client)


login_limit: RateLimitDependency = limit("5/minute; 100/hour", name="login", max_keys=10_000)


async def signed_in(client: str) -> bool:
    return login_limit.reset(client) or await login_limit.areset(client)


app = FastAPI()
app.add_middleware(RateLimitMiddleware, limits=[{"name": "ip", "key": "ip", "quota": "5/s"}],
                   exempt=lambda scope: scope["path"] == "/health", headers="legacy",
                   on_backend_error="local", body="json")
app.add_exception_handler(RateLimitExceeded, rate_limit_exceeded_handler)
router = APIRouter(dependencies=[Depends(limit(["5/minute", "100/hour"], name="api"))])


@app.get("/plan", dependencies=[Depends(limit(plan, quotas=["5/minute", "100/minute"],
                                              key=by_client, on_breach=breach))])
async def by_plan() -> Dict[str, str]:
    return {"ok": "yes"}


@app.post("/login", dependencies=[Depends(login_limit)])
async def sign_in() -> Dict[str, str]:
    return {"ok": "yes"}


flask_app = Flask(__name__)
flask_app.wsgi_app = WsgiMiddleware(  # type: ignore[method-assign]
    flask_app.wsgi_app, limits=[{"name": "ip", "key": "ip", "quota": "5/s"}],
    body=lambda environ, verdict: f"retry in {verdict.retry_after}")


view_limit: ViewLimit = flask_limit("3/minute; 10/hour", max_keys=1000,
                                     exempt=lambda request: request.remote_addr == "127.0.0.1")


@flask_app.get("/login")
@view_limit
def login() -> str:
    return "ok"


@flask_app.post("/sign-in")
@flask_limit("5/minute")
def sign_in_view() -> str:
    return "ok"


def flask_signed_in(client: str) -> bool:
    wsgi = WsgiMiddleware(flask_app.wsgi_app, limits=limits, max_keys=50)
    # The decorated view keeps its own type (called as before) and gains `reset`.
    page: str = sign_in_view()
    return view_limit.reset(client) or wsgi.reset(client) or login.reset(client) \
        or sign_in_view.reset(page)


def versioned() -> List[str]:
    return [sluicegate.__version__, *dir(sluicegate)]


def run() -> Any:
    asyncio.run(fetch_all())
    return blocking()
