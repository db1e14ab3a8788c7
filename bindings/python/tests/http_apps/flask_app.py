"""Flask, with `app.wsgi_app = RateLimitMiddleware(app.wsgi_app, ...)`: `GET /` answers
`ok`, `GET /pid` the worker's process id after `?sleep=` seconds (so that concurrent
requests spread over gunicorn's workers)."""

from __future__ import annotations

import os
import time

from flask import Flask, Response, request

from http_apps.options import middleware_options
from sluicegate.wsgi import RateLimitMiddleware

app = Flask(__name__)
app.wsgi_app = RateLimitMiddleware(app.wsgi_app,  # type: ignore[method-assign]
                                   **middleware_options("wsgi"))


@app.get("/")
def hello() -> Response:
    return Response("ok\n", mimetype="text/plain")


@app.get("/reset")
def reset() -> Response:
    """Forgets `?key=` in every limit of the middleware: whether one held it."""
    middleware: RateLimitMiddleware = app.wsgi_app  # type: ignore[assignment]
    return Response(str(middleware.reset(request.args["key"])), mimetype="text/plain")


@app.get("/pid")
def pid() -> Response:
    time.sleep(float(request.args.get("sleep", "0")))
    return Response(str(os.getpid()), mimetype="text/plain")
