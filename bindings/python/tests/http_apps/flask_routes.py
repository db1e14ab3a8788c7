"""Flask with per-view limits (`sluicegate.flask.limit`); `SLUICEGATE_TEST_REDIS`, when set,
puts the `/shared` view's limit on that Redis."""

import os

from flask import Flask, request

from sluicegate.flask import limit

app = Flask(__name__)
REDIS = os.environ.get("SLUICEGATE_TEST_REDIS") or None


login_limit = limit("3/minute")


@app.post("/login")
@login_limit
def login() -> str:
    return "ok"


@app.get("/reset")
def reset() -> str:
    """Forgets `?key=` in the `/login` view's limit."""
    return str(login_limit.reset(request.args["key"]))


@app.get("/several")
@limit("2/minute; 100/hour", name="several")
def several() -> str:
    return "ok"


@app.get("/tier")
@limit(lambda request: request.headers.get("x-plan", "1/minute"),
       quotas=["1/minute", "3/minute; 100/hour"], name="tier")
def tier() -> str:
    return "ok"


@app.get("/bounded")
@limit("5/minute", name="bounded", key="header:x-user", max_keys=1)
def bounded() -> str:
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
