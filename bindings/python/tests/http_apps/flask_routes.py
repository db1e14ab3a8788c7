"""Flask with per-view limits (`sluicegate.flask.limit`); `SLUICEGATE_TEST_REDIS`, when set,
puts the `/shared` view's limit on that Redis."""

import os

from flask import Flask, request

from sluicegate.flask import limit

app = Flask(__name__)
REDIS = os.environ.get("SLUICEGATE_TEST_REDIS") or None


@app.post("/login")
@limit("3/minute")
def login() -> str:
    return "ok"


@app.get("/both")
@limit(["2/minute", "100/hour"], name="both", body="json")
def both() -> dict:
    return {"ok": "yes"}


@app.get("/token")
@limit("1/minute", key=lambda request: request.headers.get("x-token"),
       exempt=lambda request: request.args.get("probe") == "1")
def token() -> str:
    return "ok"


@app.get("/shared")
@limit("4/minute", name="shared", redis=REDIS, key="global")
def shared() -> str:
    return str(os.getpid())


@app.get("/pid")
def pid() -> str:
    return str(os.getpid())
