"""FastAPI with per-route limits (`sluicegate.fastapi.limit`), and the app-wide middleware
limiting `/mw/...` only (the other paths are exempt)."""

import json
import os
from typing import Dict, List, Optional

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import PlainTextResponse

from sluicegate import HttpVerdict
from sluicegate.asgi import RateLimitMiddleware
from sluicegate.fastapi import RateLimitExceeded, limit, rate_limit_exceeded_handler

app = FastAPI()
if json.loads(os.environ.get("SLUICEGATE_TEST_MIDDLEWARE", "{}")).get("handler"):
    # Refusals as `body=` writes them, instead of FastAPI's {"detail": ...}.
    app.add_exception_handler(RateLimitExceeded, rate_limit_exceeded_handler)
app.add_middleware(RateLimitMiddleware,
                   limits=[{"name": "app", "key": "ip", "quota": "100/minute"}],
                   exempt=lambda scope: not scope["path"].startswith("/mw/"))
breaches: List[Dict[str, object]] = []


def record(request: Request, verdict: HttpVerdict) -> None:
    breaches.append({"path": request.url.path, "limit": verdict.limit,
                     "retry_after": verdict.retry_after})


def plan(request: Request) -> str:
    return "5/minute" if request.headers.get("x-plan") == "pro" else "1/minute"


def client_and_plan(request: Request, client: Optional[str]) -> str:
    return f"{client}|{request.headers.get('x-plan', 'free')}"


login_limit = limit("3/minute", name="login", on_breach=record)


@app.post("/login", dependencies=[Depends(login_limit)])
async def login() -> Dict[str, str]:
    return {"ok": "yes"}


both_limit = limit(["2/minute", "100/hour"], name="both")


@app.get("/both", dependencies=[Depends(both_limit)])
async def both() -> Dict[str, str]:
    return {"ok": "yes"}


@app.get("/plan", dependencies=[Depends(limit(plan, quotas=["1/minute", "5/minute"],
                                              name="plan", key=client_and_plan))])
async def by_plan() -> Dict[str, str]:
    return {"ok": "yes"}


@app.get("/health", dependencies=[Depends(limit(
    "1/minute", name="health", exempt=lambda request: request.url.path == "/health"))])
async def health() -> Dict[str, str]:
    return {"ok": "yes"}


@app.get("/reset")
async def reset(key: str) -> bool:
    """Forgets `key` in the `/login` and `/both` limits."""
    login = await login_limit.areset(key)
    return both_limit.reset(key) or login


@app.get("/several", dependencies=[Depends(limit("2/minute; 100/hour", name="several"))])
async def several() -> Dict[str, str]:
    return {"ok": "yes"}


@app.get("/bounded", dependencies=[Depends(limit("5/minute", name="bounded",
                                                 key="header:x-user", max_keys=1))])
async def bounded() -> Dict[str, str]:
    return {"ok": "yes"}


@app.get("/breaches")
async def breaches_seen() -> List[Dict[str, object]]:
    return breaches


router = APIRouter(prefix="/r", dependencies=[Depends(limit(
    "2/minute", name="router", headers="legacy", body=lambda request, verdict:
    f"slow down, {verdict.retry_after} s", content_type="text/plain"))])


@router.get("/a", response_class=PlainTextResponse)
async def router_a() -> str:
    return "a"


@router.get("/b", response_class=PlainTextResponse)
async def router_b() -> str:
    return "b"


app.include_router(router)


@app.get("/mw/route", dependencies=[Depends(limit("1/minute", name="mwroute"))])
async def under_both() -> Dict[str, str]:
    return {"ok": "yes"}
