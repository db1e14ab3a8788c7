"""Real HTTP servers for the middleware tests, on 127.0.0.1, each a process of its own that
the test stops by its PID: uvicorn (Starlette, FastAPI), gunicorn (Flask) and the Rust
example server `http_server`; and a plain HTTP/1.1 client that keeps the headers as sent."""

from __future__ import annotations

import functools
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import pytest

from conftest import free_port

TESTS = Path(__file__).resolve().parent
REPOSITORY = TESTS.parents[2]
BIN = Path(sys.executable).parent


@dataclass
class Response:
    status: int
    headers: List[Tuple[str, str]]  # as received: names in their case, in order
    body: bytes

    def header(self, name: str) -> Optional[str]:
        found = [value for key, value in self.headers if key.lower() == name.lower()]
        assert len(found) <= 1, f"{name} sent {len(found)} times: {self.headers}"
        return found[0] if found else None

    def limited(self) -> Tuple[Any, ...]:
        """What the rate limiter wrote: the status and the rate-limit headers, and for a
        refusal also its content headers and body (not Date, Server or the app's own)."""
        names = {"ratelimit-policy", "ratelimit", "retry-after"}
        if self.status >= 300:
            names |= {"content-type", "content-length"}
        headers = [(key, value) for key, value in self.headers if key.lower() in names]
        return (self.status, headers, self.body if self.status >= 300 else None)


def get(port: int, path: str = "/", headers: Optional[Dict[str, str]] = None,
        source: str = "127.0.0.1", host: str = "127.0.0.1") -> Response:
    """One GET on a new connection from `source` (any 127.x.y.z: a different peer)."""
    connection = http.client.HTTPConnection(host, port, timeout=30,
                                            source_address=(source, 0))
    try:
        connection.request("GET", path, headers=headers or {})
        answer = connection.getresponse()
        return Response(answer.status, list(answer.getheaders()), answer.read())
    finally:
        connection.close()


class Server:
    """A server process listening on 127.0.0.1:`port` (or printing where it listens)."""

    def __init__(self, argv: Sequence[str], port: Optional[int],
                 env: Optional[Dict[str, str]] = None, cwd: Path = TESTS) -> None:
        self.log = tempfile.NamedTemporaryFile(prefix="sluicegate-server-", suffix=".log")
        self.argv = list(argv)
        self.process = subprocess.Popen(
            self.argv, cwd=cwd, env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE if port is None else self.log, stderr=self.log,
            text=True, start_new_session=True)
        self.port = port if port is not None else self._printed_port()
        self._wait_until_listening()

    def _printed_port(self) -> int:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("listening on http://"):
            output = self.output()
            self.stop()
            pytest.fail(f"{' '.join(self.argv)} did not start: {line!r} {output}",
                        pytrace=False)
        return int(line.strip().rsplit(":", 1)[1])

    def _wait_until_listening(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                output = self.output()
                self.stop()
                pytest.fail(f"{' '.join(self.argv)} did not listen on {self.port}:\n"
                            f"{output}", pytrace=False)
            time.sleep(0.05)

    def output(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        """SIGTERM to the process by its PID (gunicorn stops its workers), then waits."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.log.close()

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *_exception: object) -> None:
        self.stop()


class UnixConnection(http.client.HTTPConnection):
    """HTTP/1.1 over a Unix domain socket at `path` (what nginx in front of
    `uvicorn --uds` does)."""

    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=30)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(self.path)


def get_unix(path: str, target: str = "/",
             headers: Optional[Dict[str, str]] = None) -> Response:
    """One GET over the Unix socket `path`, on a new connection."""
    connection = UnixConnection(path)
    try:
        connection.request("GET", target, headers=headers or {})
        answer = connection.getresponse()
        return Response(answer.status, list(answer.getheaders()), answer.read())
    finally:
        connection.close()


class UnixServer(Server):
    """A server listening on the Unix socket `path` (no TCP port)."""

    def __init__(self, argv: Sequence[str], path: str, env: Dict[str, str]) -> None:
        self.socket_path = path
        super().__init__(argv, 0, env)

    def _wait_until_listening(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                    probe.settimeout(0.5)
                    probe.connect(self.socket_path)
                return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                output = self.output()
                self.stop()
                pytest.fail(f"{' '.join(self.argv)} did not listen on {self.socket_path}:\n"
                            f"{output}", pytrace=False)
            time.sleep(0.05)


def uvicorn_uds(app: str, options: Dict[str, Any], path: str) -> UnixServer:
    """`uvicorn http_apps.<app>:app --uds <path>`, the usual setup behind nginx (proxy
    headers off, as the README says to run it)."""
    return UnixServer([str(BIN / "uvicorn"), f"http_apps.{app}:app", "--uds", path,
                       "--no-proxy-headers", "--log-level", "warning"],
                      path, middleware_env(options))


def middleware_env(options: Dict[str, Any]) -> Dict[str, str]:
    return {"SLUICEGATE_TEST_MIDDLEWARE": json.dumps(options)}


def uvicorn(app: str, options: Dict[str, Any], *flags: str, host: str = "127.0.0.1") -> Server:
    """`uvicorn http_apps.<app>:app` with the middleware's `options`. The proxy headers are
    off (`--no-proxy-headers`, as the README says to run it) unless `flags` say otherwise."""
    port = free_port()
    if not any(flag.startswith("--proxy-headers") for flag in flags):
        flags = ("--no-proxy-headers", *flags)
    return Server([str(BIN / "uvicorn"), f"http_apps.{app}:app", "--host", host,
                   "--port", str(port), "--log-level", "warning", *flags],
                  port, middleware_env(options))


def gunicorn(options: Dict[str, Any], workers: int = 2, *flags: str) -> Server:
    """gunicorn with `workers` sync workers serving the Flask app."""
    port = free_port()
    return Server([str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers",
                   str(workers), "--log-level", "warning", *flags, "http_apps.flask_app:app"],
                  port, middleware_env(options))


@functools.lru_cache(maxsize=None)
def http_server_binary() -> Path:
    """The Rust example server the answers are compared with, built by cargo once a session
    from this checkout (at once when the workspace's release tests have built it: the same
    features, so the same artifact), so that it is never missing or stale."""
    built = subprocess.run(["cargo", "build", "--workspace", "--release", "--all-features",
                            "--example", "http_server"],
                           cwd=REPOSITORY, capture_output=True, text=True)
    if built.returncode != 0:
        pytest.fail(f"cannot build the Rust example server http_server:\n{built.stderr[-4000:]}",
                    pytrace=False)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPOSITORY / "target"))
    if not target.is_absolute():
        target = REPOSITORY / target
    return target / "release" / "examples" / "http_server"


def http_server(limits: Sequence[str], *flags: str) -> Server:
    """The Rust example server (its tower layer) with `--limit`s, on a free port."""
    argv = [str(http_server_binary()), "--listen", "127.0.0.1:0"]
    for limit in limits:
        argv += ["--limit", limit]
    return Server([*argv, *flags], None)


def policy(limit: Dict[str, Any]) -> str:
    """A middleware limit as `http_server`'s `--limit`."""
    key = {"ip": "peer-ip"}.get(limit["key"], limit["key"])
    return (f"name={limit['name']}; key={key}; quota={limit['quota']}; "
            f"algorithm={limit.get('algorithm', 'gcra')}")



def answers_match_rust(start: Callable[[], Server], limits: List[Dict[str, Any]],
                       requests: List[Dict[str, str]]) -> List[Response]:
    """Sends `requests` (their headers) to the server `start` starts and to `http_server`
    with the same limits; asserts that every answer's status, rate-limit headers and refusal
    body match; returns the first server's answers."""
    with start() as python:
        ours = [get(python.port, headers=headers) for headers in requests]
    with http_server([policy(limit) for limit in limits]) as rust:
        theirs = [get(rust.port, headers=headers) for headers in requests]
    assert [answer.limited() for answer in ours] == [answer.limited() for answer in theirs]
    return ours


def until_decided_on_redis(port: int) -> None:
    """Waits until `port`'s limits answer from Redis: `http_server` connects lazily and lets
    requests through uncounted until its probe has found Redis (milliseconds after it
    starts). The probing requests come from 127.0.0.99, a key of their own."""
    deadline = time.monotonic() + 10
    while get(port, source="127.0.0.99").header("RateLimit") is None:
        assert time.monotonic() < deadline, "the server never decided on Redis"
        time.sleep(0.02)
