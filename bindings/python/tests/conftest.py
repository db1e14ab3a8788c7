"""Fixtures: real redis-server processes on free loopback ports, each stopped by its PID
(one for the session, one of a test's own where a test stops or pauses it, and a Redis
Cluster of three)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Iterator, Optional, Sequence

import pytest

# The tests import traces.py beside them.
sys.path.insert(0, str(Path(__file__).resolve().parent))

MISSING = ("redis-server and redis-cli are needed by the Redis tests: install them "
           "(Debian/Ubuntu: apt-get install redis-server)")


def free_port(cluster: bool = False) -> int:
    """A loopback port free now (for a cluster node, its bus port +10000 too)."""
    for _ in range(1000):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if not cluster:
            return port
        if port <= 55_000:
            with socket.socket() as bus:
                try:
                    bus.bind(("127.0.0.1", port + 10_000))
                    return port
                except OSError:
                    continue
    raise RuntimeError("no free loopback port")


def answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(MISSING, pytrace=False)
    return path


class RedisServer:
    """A redis-server process of our own on 127.0.0.1:`port`, answering PING once built."""

    def __init__(self, port: Optional[int] = None, extra: Sequence[str] = ()) -> None:
        self.port = port if port is not None else free_port(cluster=bool(extra))
        self.url = f"redis://127.0.0.1:{self.port}/"
        self.directory = tempfile.mkdtemp(prefix="sluicegate-redis-")
        self.process = subprocess.Popen(
            [binary("redis-server"), "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", self.directory, *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while not answers_ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"redis-server did not start on port {self.port}", pytrace=False)
            time.sleep(0.02)

    def pause(self) -> None:
        """Stops the process (SIGSTOP): connections stay open, nothing answers."""
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        """Stops the server by its PID and waits for it to exit."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGCONT)
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)

    def cli(self, *arguments: str) -> str:
        result = subprocess.run([binary("redis-cli"), "-p", str(self.port), *arguments],
                                capture_output=True, text=True, timeout=30)
        return result.stdout + result.stderr


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """One Redis for the session's tests (each test uses its own key prefix)."""
    server = RedisServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """A Redis of this test's own, which it may pause or stop."""
    server = RedisServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[list[RedisServer]]:
    """A Redis Cluster of three masters (no replicas), every slot served."""
    nodes: list[RedisServer] = []
    try:
        for _ in range(3):
            nodes.append(RedisServer(extra=["--cluster-enabled", "yes", "--cluster-config-file",
                                            "nodes.conf", "--cluster-node-timeout", "2000"]))
        created = nodes[0].cli("--cluster", "create",
                               *[f"127.0.0.1:{node.port}" for node in nodes],
                               "--cluster-replicas", "0", "--cluster-yes")
        assert "All 16384 slots covered" in created, created
        deadline = time.monotonic() + 20
        while not all("cluster_state:ok" in node.cli("CLUSTER", "INFO") for node in nodes):
            assert time.monotonic() < deadline, "the Redis Cluster did not become ready"
            time.sleep(0.05)
        yield nodes
    finally:
        for node in nodes:
            node.stop()


@pytest.fixture
def prefix() -> str:
    """A key prefix of this test's own, so that tests sharing a Redis share no state."""
    return f"test:{uuid.uuid4().hex}:"


@pytest.fixture
def unused_port() -> int:
    """A loopback port where nothing listens: a Redis that is down."""
    return free_port()
