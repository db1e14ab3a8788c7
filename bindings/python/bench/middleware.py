"""A Starlette hello world under `wrk` through uvicorn on 127.0.0.1: requests per second
with the sluicegate ASGI middleware (one in-process limit keyed by IP), with slowapi set up
alike, and with no limiter; alternated over rounds, medians, and each one's ratio to none in
the same round.

    python bindings/python/bench/middleware.py [--rounds 5] [--seconds 5] [--connections 32]

Needs Debian's `wrk` and, from PyPI, uvicorn with httptools and uvloop
(`uvicorn[standard]`), starlette and slowapi. The three servers (one uvicorn process each,
one worker, `--http httptools --loop uvloop`, no access log, proxy headers off) run side by
side; each round runs `wrk` against each in turn, in a rotating order. With `taskset`, the
servers share CPU 0 and wrk runs on CPU 1, so wrk does not take the server's core.
"""

from __future__ import annotations

import argparse
import http.client
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
VARIANTS = ["none", "sluicegate", "slowapi"]
# What each variant must answer, so that each run measures the limiter it names.
HEADER = {"none": None, "sluicegate": "ratelimit", "slowapi": "x-ratelimit-limit"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def pinned(cpu: int, argv: list[str]) -> list[str]:
    taskset = shutil.which("taskset")
    return [taskset, "-c", str(cpu), *argv] if taskset and os.cpu_count() and os.cpu_count() > 1 \
        else argv


class Server:
    def __init__(self, variant: str) -> None:
        self.variant, self.port = variant, free_port()
        self.process = subprocess.Popen(
            pinned(0, [str(BIN / "uvicorn"), "starlette_hello:app", "--host", "127.0.0.1",
                       "--port", str(self.port), "--http", "httptools", "--loop", "uvloop",
                       "--no-access-log", "--no-proxy-headers", "--log-level", "warning"]),
            cwd=HERE, env={**os.environ, "SLUICEGATE_BENCH_MIDDLEWARE": variant})
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"uvicorn ({variant}) did not start")
                time.sleep(0.05)
        self.check()

    def check(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        connection.request("GET", "/")
        answer = connection.getresponse()
        body = answer.read()
        connection.close()
        assert answer.status == 200 and body == b"Hello, world!", (answer.status, body)
        limited = [name for name, _ in answer.getheaders()
                   if name.lower() in ("ratelimit", "x-ratelimit-limit")]
        expected = [] if HEADER[self.variant] is None else [HEADER[self.variant]]
        assert [name.lower() for name in limited] == expected, (self.variant, limited)

    def wrk(self, seconds: int, connections: int) -> float:
        """Requests per second of one wrk run; every answer must be a 2xx."""
        result = subprocess.run(
            pinned(1, ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s",
                       f"http://127.0.0.1:{self.port}/"]),
            capture_output=True, text=True, check=True)
        if "Non-2xx or 3xx responses" in result.stdout:
            raise SystemExit(f"{self.variant}: wrk saw refusals:\n{result.stdout}")
        found = re.search(r"Requests/sec:\s+([\d.]+)", result.stdout)
        assert found, result.stdout
        return float(found.group(1))

    def stop(self) -> None:
        os.kill(self.process.pid, signal.SIGTERM)
        self.process.wait(timeout=30)


def versions() -> str:
    from importlib.metadata import version

    packages = ["uvicorn", "httptools", "uvloop", "starlette", "slowapi", "limits"]
    return ", ".join(f"{name} {version(name)}" for name in packages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    print(f"CPython {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; "
          f"{versions()}; wrk -t1 -c{args.connections} -d{args.seconds}s; "
          f"taskset {'on' if shutil.which('taskset') else 'off'}")
    servers = {variant: Server(variant) for variant in VARIANTS}
    try:
        for server in servers.values():
            server.wrk(2, args.connections)  # warm-up
        rates: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
        for round_ in range(args.rounds):
            order = VARIANTS[round_ % 3:] + VARIANTS[:round_ % 3]
            for variant in order:
                rates[variant].append(servers[variant].wrk(args.seconds, args.connections))
            print(f"round {round_ + 1}: " + ", ".join(
                f"{variant} {rates[variant][-1]:,.0f}/s" for variant in VARIANTS), flush=True)
        for server in servers.values():
            server.check()
    finally:
        for server in servers.values():
            server.stop()
    print()
    print("| middleware | requests/s, median | per round | against none, per round: median (range) |")
    print("|---|--:|---|--:|")
    for variant in VARIANTS:
        ratios = [rate / none for rate, none in zip(rates[variant], rates["none"])]
        per_round = " ".join(f"{rate:,.0f}" for rate in rates[variant])
        print(f"| {variant} | {statistics.median(rates[variant]):,.0f} | {per_round} | "
              f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) |")


if __name__ == "__main__":
    main()
