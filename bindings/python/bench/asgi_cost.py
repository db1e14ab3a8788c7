"""What the ASGI middleware adds to a request, in process: a bare ASGI app called in a loop
with and without `RateLimitMiddleware` around it (one in-process limit keyed by IP, a quota
no run reaches), and the middleware's native parts alone. No server, no network: the part of
`middleware.py`'s wrk figures that is the middleware's own.

    python bindings/python/bench/asgi_cost.py [--rounds 7] [--calls 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any, Callable, Dict, List

from sluicegate.asgi import RateLimitMiddleware

SCOPE: Dict[str, Any] = {
    "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
    "scheme": "http", "path": "/", "raw_path": b"/", "query_string": b"", "root_path": "",
    "headers": [(b"host", b"127.0.0.1:8000"), (b"user-agent", b"wrk"), (b"accept", b"*/*")],
    "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
}
RESPONSE_HEADERS = [(b"content-type", b"text/plain; charset=utf-8")]


async def app(scope: Dict[str, Any], receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": RESPONSE_HEADERS})
    await send({"type": "http.response.body", "body": b"Hello, world!"})


async def receive() -> Dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def send(message: Dict[str, Any]) -> None:
    pass


async def per_request(asgi: Any, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        await asgi(SCOPE, receive, send)
    return (time.perf_counter() - start) / calls * 1e9


def per_call(fn: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e9


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=100_000)
    args = parser.parse_args()
    limited = RateLimitMiddleware(app, limits=[{"name": "ip", "key": "ip",
                                                "quota": "1000000000/second"}])
    verdict = limited.limiter.decide_asgi(SCOPE)
    rows: Dict[str, List[float]] = {"no middleware": [], "RateLimitMiddleware": [],
                                    "decide_asgi(scope)": [], "verdict.asgi_headers(...)": []}
    for _ in range(args.rounds):  # alternated within each round
        rows["no middleware"].append(await per_request(app, args.calls))
        rows["RateLimitMiddleware"].append(await per_request(limited, args.calls))
        rows["decide_asgi(scope)"].append(
            per_call(lambda: limited.limiter.decide_asgi(SCOPE), args.calls))
        rows["verdict.asgi_headers(...)"].append(
            per_call(lambda: verdict.asgi_headers(RESPONSE_HEADERS), args.calls))
    print(f"{args.rounds} rounds of {args.calls:,} calls; ns a call, median (range)")
    for name, values in rows.items():
        print(f"  {name:28} {statistics.median(values):7,.0f} "
              f"({min(values):,.0f}-{max(values):,.0f})")


if __name__ == "__main__":
    asyncio.run(main())
