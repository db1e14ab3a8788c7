"""Redis over TLS and through Sentinel, on real servers: `RedisLimiter`'s `ca_cert`,
`client_cert`, `client_key` (a path, PEM text, bytes, a `Path`) against a redis-server
serving TLS only with certificates this file makes (`openssl`); the middlewares' `redis=`
dict; a wrong CA or a missing client certificate failing loudly (a `RedisError`, a counted
backend error, never a silent pass); a PEM option the library cannot read named where the
limiter is built; and `redis-sentinel://` URLs, with the Sentinels' password."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, List

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from conftest import RedisServer, binary, free_port
from sluicegate import Limit, RedisError, RedisLimiter
from sluicegate._common import RedisOption
from sluicegate.asgi import RateLimitMiddleware

# Each call's timeout: far above a TLS round trip on a loaded machine, so that a test fails
# only for what it names.
TIMEOUT = 5.0


def openssl(directory: Path, *arguments: str) -> None:
    tool = shutil.which("openssl")
    if tool is None:
        pytest.fail("openssl makes this test's certificates: install it "
                    "(Debian: apt-get install openssl)", pytrace=False)
    subprocess.run([tool, *arguments], cwd=directory, check=True, capture_output=True)


class TlsFiles:
    """A CA, another CA, a server certificate for 127.0.0.1 and a client certificate, both
    signed by the first CA."""

    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="sluicegate-tls-"))
        for ca in ("ca", "other-ca"):
            openssl(self.directory, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days",
                    "1", "-subj", f"/CN=sluicegate test {ca}", "-keyout", f"{ca}.key",
                    "-out", f"{ca}.crt")
        self.signed("server", "127.0.0.1", "subjectAltName=IP:127.0.0.1,DNS:localhost")
        self.signed("client", "sluicegate client", "extendedKeyUsage=clientAuth")

    def signed(self, name: str, common: str, extension: str) -> None:
        (self.directory / f"{name}.ext").write_text(extension + "\n")
        openssl(self.directory, "req", "-newkey", "rsa:2048", "-nodes", "-subj",
                f"/CN={common}", "-keyout", f"{name}.key", "-out", f"{name}.csr")
        openssl(self.directory, "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt",
                "-CAkey", "ca.key", "-CAcreateserial", "-days", "1", "-extfile",
                f"{name}.ext", "-out", f"{name}.crt")

    def path(self, name: str) -> str:
        return str(self.directory / name)

    def text(self, name: str) -> str:
        return (self.directory / name).read_text()


class TlsRedis:
    """A redis-server on 127.0.0.1 serving TLS only (no plain port); with `mutual`, refusing
    clients without a certificate signed by the CA."""

    def __init__(self, files: TlsFiles, mutual: bool) -> None:
        self.files = files
        self.port = free_port()
        self.url = f"rediss://127.0.0.1:{self.port}/"
        self.directory = tempfile.mkdtemp(prefix="sluicegate-redis-")
        self.process = subprocess.Popen(
            [binary("redis-server"), "--port", "0", "--tls-port", str(self.port),
             "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.directory,
             "--tls-cert-file", files.path("server.crt"),
             "--tls-key-file", files.path("server.key"),
             "--tls-ca-cert-file", files.path("ca.crt"),
             "--tls-auth-clients", "yes" if mutual else "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while "PONG" not in self.cli("PING"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"redis-server (TLS) did not start on port {self.port}",
                            pytrace=False)
            time.sleep(0.05)

    def cli(self, *arguments: str) -> str:
        result = subprocess.run(
            [binary("redis-cli"), "--tls", "--cacert", self.files.path("ca.crt"),
             "--cert", self.files.path("client.crt"), "--key", self.files.path("client.key"),
             "-p", str(self.port), *arguments],
            capture_output=True, text=True, timeout=30)
        return result.stdout.strip()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        shutil.rmtree(self.directory, ignore_errors=True)


class Sentinel:
    """One redis-sentinel (quorum 1) watching `master` as `mymaster`, once it names it."""

    def __init__(self, master: RedisServer, extra: str = "") -> None:
        self.port = free_port()
        self.directory = tempfile.mkdtemp(prefix="sluicegate-sentinel-")
        config = Path(self.directory) / "sentinel.conf"
        config.write_text(f"port {self.port}\nbind 127.0.0.1\nprotected-mode no\n"
                          f"dir {self.directory}\n"
                          f"sentinel monitor mymaster 127.0.0.1 {master.port} 1\n{extra}")
        tool = shutil.which("redis-sentinel")
        if tool is None:
            pytest.fail("redis-sentinel is needed by this test: install it "
                        "(Debian: apt-get install redis-sentinel)", pytrace=False)
        self.process = subprocess.Popen([tool, str(config)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        password = extra.split("requirepass ", 1)[1].split()[0] if "requirepass" in extra else ""
        deadline = time.monotonic() + 10
        while True:
            login = ["-a", password, "--no-auth-warning"] if password else []
            named = subprocess.run(
                [binary("redis-cli"), "-p", str(self.port), *login, "SENTINEL",
                 "GET-MASTER-ADDR-BY-NAME", "mymaster"], capture_output=True, text=True)
            if str(master.port) in named.stdout:
                break
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"redis-sentinel did not name the master: {named.stdout}",
                            pytrace=False)
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture(scope="module")
def files() -> Iterator[TlsFiles]:
    made = TlsFiles()
    try:
        yield made
    finally:
        shutil.rmtree(made.directory, ignore_errors=True)


@pytest.fixture
def tls_redis(files: TlsFiles) -> Iterator[TlsRedis]:
    server = TlsRedis(files, mutual=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def mutual_redis(files: TlsFiles) -> Iterator[TlsRedis]:
    server = TlsRedis(files, mutual=True)
    try:
        yield server
    finally:
        server.stop()


def allowed(limiter: RedisLimiter, times: int = 3) -> List[bool]:
    return [limiter.check("k").allowed for _ in range(times)]


def statuses(redis: RedisOption, name: str, on_backend_error: str = "allow") -> List[int]:
    """Three GETs through an app limited to 2/minute by limit `name` on `redis`."""
    app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("ok"))])
    app.add_middleware(RateLimitMiddleware, redis=redis, on_backend_error=on_backend_error,
                       limits=[{"name": name, "key": "global", "quota": "2/minute"}])
    with TestClient(app) as client:
        return [client.get("/").status_code for _ in range(3)]


def test_rediss_verified_against_ca_cert_decides_on_that_redis(files: TlsFiles,
                                                              tls_redis: TlsRedis) -> None:
    limiter = RedisLimiter("2/minute", url=tls_redis.url, ca_cert=files.path("ca.crt"),
                           prefix="tls-path:", timeout=TIMEOUT)
    assert allowed(limiter) == [True, True, False]
    assert tls_redis.cli("KEYS", "tls-path:*").startswith("tls-path:")
    # The CA as a Path, as bytes and as PEM text: the same Redis, the same counter.
    for ca in (Path(files.path("ca.crt")), files.text("ca.crt").encode(), files.text("ca.crt")):
        again = RedisLimiter("2/minute", url=tls_redis.url, ca_cert=ca, prefix="tls-path:",
                             timeout=TIMEOUT)
        assert allowed(again, 1) == [False]


def test_middleware_redis_dict_decides_on_the_tls_redis(files: TlsFiles,
                                                        tls_redis: TlsRedis) -> None:
    redis = {"url": tls_redis.url, "ca_cert": files.text("ca.crt").encode()}
    assert statuses(redis, "tls") == [200, 200, 429]
    assert tls_redis.cli("KEYS", "sluicegate:http:tls:*").startswith("sluicegate:http:tls:")
    assert statuses(redis, "tls") == [429, 429, 429], "a second app of that name shares it"


def test_the_wrong_ca_fails_loudly(files: TlsFiles, tls_redis: TlsRedis) -> None:
    with pytest.raises(RedisError):
        RedisLimiter("2/minute", url=tls_redis.url, ca_cert=files.path("other-ca.crt"))
    # The middleware counts it as a backend error: `deny` answers 503, nothing lands.
    redis = {"url": tls_redis.url, "ca_cert": files.path("other-ca.crt")}
    assert statuses(redis, "wrong-ca", on_backend_error="deny") == [503, 503, 503]
    assert tls_redis.cli("KEYS", "sluicegate:http:wrong-ca:*") == ""


def test_mutual_tls_with_client_cert_and_key(files: TlsFiles, mutual_redis: TlsRedis) -> None:
    limiter = RedisLimiter("2/minute", url=mutual_redis.url, ca_cert=files.text("ca.crt"),
                           client_cert=files.text("client.crt"),
                           client_key=files.path("client.key"), prefix="mtls:",
                           timeout=TIMEOUT)
    assert allowed(limiter) == [True, True, False]
    with pytest.raises(RedisError):
        RedisLimiter("2/minute", url=mutual_redis.url, ca_cert=files.path("ca.crt"))
    redis = {"url": mutual_redis.url, "ca_cert": files.path("ca.crt"),
             "client_cert": files.path("client.crt"), "client_key": files.path("client.key")}
    assert statuses(redis, "mtls") == [200, 200, 429]


LIMITS: List[Limit] = [{"name": "a", "key": "ip", "quota": "1/second"}]


async def nothing(scope: Any, receive: Any, send: Any) -> None:
    """An ASGI app that is never called: the middleware fails before."""


def test_a_bad_option_is_named_where_it_is_built(files: TlsFiles) -> None:
    url = "rediss://127.0.0.1:1/"
    with pytest.raises(ValueError, match=r'redis\.client_key: "/nonexistent/client\.key" is '
                                         r'neither PEM text'):
        RedisLimiter("2/minute", url=url, client_cert=files.path("client.crt"),
                     client_key="/nonexistent/client.key", lazy=True)
    with pytest.raises(ValueError, match=r"redis\.client_key: a client certificate and its "
                                         r"key go together"):
        RateLimitMiddleware(nothing, limits=LIMITS,
                            redis={"url": url, "client_cert": files.path("client.crt")})
    with pytest.raises(ValueError, match=r'unknown option "cacert"'):
        RateLimitMiddleware(nothing, limits=LIMITS,
                            redis={"url": url, "cacert": files.path("ca.crt")})
    with pytest.raises(TypeError, match=r"redis\.ca_cert must be a PEM file's path"):
        RedisLimiter("2/minute", url=url, ca_cert=42, lazy=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"redis\.url"):
        RateLimitMiddleware(nothing, limits=LIMITS,
                            redis={"url": "redis-sentinel://127.0.0.1:1/"})


def test_redis_sentinel_url_decides_on_the_master_it_names(own_redis: RedisServer) -> None:
    sentinel = Sentinel(own_redis)
    try:
        url = f"redis-sentinel://127.0.0.1:{sentinel.port}/#mymaster"
        limiter = RedisLimiter("2/minute", url=url, prefix="sentinel:", timeout=TIMEOUT)
        assert allowed(limiter) == [True, True, False]
        assert own_redis.cli("KEYS", "sentinel:*").startswith("sentinel:")
        assert statuses(url, "sentinel") == [200, 200, 429]
        assert own_redis.cli("KEYS", "sluicegate:http:sentinel:*").startswith(
            "sluicegate:http:sentinel:")
    finally:
        sentinel.stop()


def test_sentinel_password_logs_in_to_the_sentinels(own_redis: RedisServer) -> None:
    sentinel = Sentinel(own_redis, "requirepass sentinel-secret\n")
    try:
        url = f"redis-sentinel://127.0.0.1:{sentinel.port}/#mymaster"
        with pytest.raises(RedisError):
            RedisLimiter("2/minute", url=url, timeout=1.0)
        limiter = RedisLimiter("2/minute", url=url, prefix="sentinel-auth:",
                               sentinel_password="sentinel-secret", timeout=TIMEOUT)
        assert allowed(limiter) == [True, True, False]
        redis = {"url": url, "sentinel_password": "sentinel-secret"}
        assert statuses(redis, "sentinel-auth") == [200, 200, 429]
    finally:
        sentinel.stop()
