"""Fixtures: a real redis-server on a free loopback port, started once for the session and
stopped by its PID."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """A redis-server process of our own, on 127.0.0.1:`port`."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail(
                "redis-server is not installed: the Redis tests need it "
                "(Debian/Ubuntu: apt-get install redis-server)",
                pytrace=False,
            )
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/"
        self.directory = tempfile.mkdtemp(prefix="sluicegate-redis-")
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.directory],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while not answers_ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"redis-server did not start on port {self.port}", pytrace=False)
            time.sleep(0.02)

    def stop(self) -> None:
        """Stops the server by its PID and waits for it."""
        if self.process.poll() is None:
            os.kill(self.process.pid, 15)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, 9)
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def unused_port() -> int:
    """A loopback port where nothing listens (for a Redis that is down)."""
    return free_port()
