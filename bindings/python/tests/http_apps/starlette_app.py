"""Starlette, wrapped as `RateLimitMiddleware(app, ...)`: `GET /` answers `ok`, `GET /pid`
the worker's process id, `GET /lifespan` whether the lifespan startup ran through the
middleware, and `/echo` is a websocket that echoes one message."""

from __future__ import annotations

import contextlib
import os
from typing import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from http_apps.options import middleware_options
from sluicegate.asgi import RateLimitMiddleware

started: list[bool] = []


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    started.append(True)
    yield


async def hello(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ok\n")


async def pid(request: Request) -> PlainTextResponse:
    return PlainTextResponse(str(os.getpid()))


async def lifespan_ran(request: Request) -> PlainTextResponse:
    return PlainTextResponse("started" if started else "not started")


async def reset(request: Request) -> PlainTextResponse:
    """Forgets `?key=` in every limit of the middleware: whether one held it."""
    return PlainTextResponse(str(await app.areset(request.query_params["key"])))


async def echo(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_text(await websocket.receive_text())
    await websocket.close()


routes = [Route("/", hello), Route("/pid", pid), Route("/lifespan", lifespan_ran),
          Route("/reset", reset), WebSocketRoute("/echo", echo)]
app = RateLimitMiddleware(Starlette(routes=routes, lifespan=lifespan),
                          **middleware_options("asgi"))
