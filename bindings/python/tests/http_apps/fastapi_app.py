"""FastAPI, with `app.add_middleware(RateLimitMiddleware, ...)`: the routes of
`starlette_app`."""

from __future__ import annotations

import contextlib
import os
from typing import AsyncIterator

from fastapi import FastAPI, WebSocket
from fastapi.responses import PlainTextResponse

from http_apps.options import middleware_options
from sluicegate.asgi import RateLimitMiddleware

started: list[bool] = []


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    started.append(True)
    yield


app = FastAPI(lifespan=lifespan)
app.add_middleware(RateLimitMiddleware, **middleware_options("asgi"))


@app.get("/", response_class=PlainTextResponse)
async def hello() -> str:
    return "ok\n"


@app.get("/pid", response_class=PlainTextResponse)
async def pid() -> str:
    return str(os.getpid())


@app.get("/lifespan", response_class=PlainTextResponse)
async def lifespan_ran() -> str:
    return "started" if started else "not started"


@app.websocket("/echo")
async def echo(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_text(await websocket.receive_text())
    await websocket.close()
