"""Type stubs for `sluicegate._native`, the compiled module (PyO3) over the Rust engine.

Every time is in seconds (float). Every decision is the engine's.
"""

import os
from types import TracebackType
from typing import (Any, Coroutine, Iterable, List, Literal, Mapping, Optional, Tuple, TypeVar,
                    Union, final)

from typing_extensions import disjoint_base

from .limit import Limit

__all__ = [
    "Decision",
    "HttpLimiter",
    "HttpVerdict",
    "KeyedLimiter",
    "Limiter",
    "ManualClock",
    "RedisError",
    "RedisLimiter",
    "_release_gil_during_checks",
]

@final
class Decision:
    """The answer to "may this request go ahead?", with every number a response needs.

    `bool(decision)` is `decision.allowed`.
    """

    @property
    def allowed(self) -> bool:
        """True when the request may go ahead (for a check: its cost was consumed)."""
    @property
    def limit(self) -> int:
        """The quota's limit (requests per period)."""
    @property
    def remaining(self) -> int:
        """How many more single requests would be allowed right now."""
    @property
    def retry_after(self) -> Optional[float]:
        """Denied: seconds until the same request would be allowed (1.0 for a full
        table's denial). Allowed: None."""
    @property
    def reset_after(self) -> float:
        """Seconds until the state is fully replenished (0.0 when it already is)."""
    @property
    def wait(self) -> float:
        """The leaky bucket's shaping delay (seconds) for an admitted request; else 0.0."""
    @property
    def table_full(self) -> bool:
        """True when a keyed limiter refused a new key because it holds `max_keys` keys."""
    def __bool__(self) -> bool: ...

@final
class ManualClock:
    """Time that moves only when told to, for tests: starts at 0 (the UNIX epoch for window
    alignment); every limiter given this clock reads the same time."""

    def __new__(cls) -> ManualClock: ...
    def advance(self, seconds: float) -> None:
        """Moves time forward by `seconds` (rounded to the nanosecond)."""
    def set(self, seconds: float) -> None:
        """Sets the time to `seconds` since 0 (rounded to the nanosecond); may go back."""
    @property
    def now(self) -> float:
        """The time, in seconds since 0."""

@disjoint_base
class Limiter:
    """One limit for everything: `Limiter("1000/second")`."""

    def __new__(
        cls, quota: str, algorithm: str = "gcra", clock: Optional[ManualClock] = None
    ) -> Limiter:
        """`ValueError` (the engine's sentence) for a bad quota or an unknown algorithm."""
    def check(self, cost: int = 1) -> Decision:
        """Decides a request of `cost`, consuming it when allowed. `ValueError` when `cost`
        can never fit (above `max_cost`), is negative or is not whole."""
    def peek(self, cost: int = 1) -> Decision:
        """The decision `check(cost)` would return now, consuming nothing."""
    def hit(self, n: int = 1) -> Decision:
        """Records `n` whatever the answer; the decision says whether it was within."""
    @property
    def algorithm(self) -> str:
        """The algorithm's name, e.g. "gcra"."""
    @property
    def quota(self) -> str:
        """The quota, as a quota string."""
    @property
    def max_cost(self) -> int:
        """The largest cost one check can ever be allowed."""

@disjoint_base
class KeyedLimiter:
    """A limit per `str` key: `KeyedLimiter("100/minute burst 20")`."""

    def __new__(
        cls,
        quota: str,
        algorithm: str = "gcra",
        clock: Optional[ManualClock] = None,
        max_keys: Optional[int] = None,
    ) -> KeyedLimiter:
        """`ValueError` (the engine's sentence) for a bad quota or an unknown algorithm."""
    def check(self, key: str, cost: int = 1) -> Decision:
        """Decides a request of `cost` for `key`, consuming it when allowed. `TypeError`
        for a key that is not a str; `ValueError` for a cost that can never fit."""
    def peek(self, key: str, cost: int = 1) -> Decision:
        """The decision `check(key, cost)` would return now, consuming nothing."""
    def hit(self, key: str, n: int = 1) -> Decision:
        """Records `n` for `key` whatever the answer."""
    def reset(self, key: str) -> bool:
        """Forgets `key`: its next request is decided as a new key's; whether it held a state."""
    def __len__(self) -> int:
        """The keys currently held."""
    @property
    def algorithm(self) -> str:
        """The algorithm's name, e.g. "sliding-window"."""
    @property
    def quota(self) -> str:
        """The quota, as a quota string."""
    @property
    def max_cost(self) -> int:
        """The largest cost one check can ever be allowed."""

_Redis = TypeVar("_Redis", bound="RedisLimiter")

@disjoint_base
class RedisLimiter:
    """One limit for every process on a Redis (or a Redis Cluster):
    `RedisLimiter("100/minute", url="redis://127.0.0.1:6379/")`.

    Connects when built (unless `lazy`); `check`, `peek` and `hit` block with the GIL
    released; `acheck`, `apeek` and `ahit` are awaitables (asyncio). Each call is one atomic
    script on Redis bounded by `timeout` seconds; when Redis cannot answer in time it raises
    `RedisError`. The same quota, algorithm, key and prefix on the same Redis are one limit
    for every process (Rust, Node and Python alike).
    """

    def __new__(
        cls,
        quota: str,
        url: str = "redis://127.0.0.1:6379/",
        algorithm: str = "gcra",
        prefix: str = "sluicegate:",
        cluster: bool = False,
        timeout: float = 0.1,
        clock: Optional[ManualClock] = None,
        lazy: bool = False,
        *,
        ca_cert: Union[str, bytes, "os.PathLike[str]", None] = None,
        client_cert: Union[str, bytes, "os.PathLike[str]", None] = None,
        client_key: Union[str, bytes, "os.PathLike[str]", None] = None,
        sentinel_username: Optional[str] = None,
        sentinel_password: Optional[str] = None,
    ) -> RedisLimiter:
        """`ValueError` for a bad quota, algorithm, URL, prefix or TLS file, or a quota the
        algorithm cannot run exactly on Redis; `RedisError` when Redis cannot be reached
        (not `lazy`). `url` with `cluster=True`: seed nodes separated by commas;
        `rediss://` over TLS (verified against `ca_cert` when given; `client_cert` and
        `client_key` for mutual TLS: each a PEM file's path, the PEM text or bytes of it);
        `redis-sentinel://host1:26379,host2:26379/#primary` through Sentinels, which
        `sentinel_username` and `sentinel_password` log in to."""
    def check(self, key: str, cost: int = 1) -> Decision:
        """Decides a request of `cost` for `key`, consuming it when allowed (blocks)."""
    def peek(self, key: str, cost: int = 1) -> Decision:
        """The decision `check(key, cost)` would return now, consuming nothing (blocks)."""
    def hit(self, key: str, n: int = 1) -> Decision:
        """Records `n` for `key` whatever the answer (blocks)."""
    def acheck(self, key: str, cost: int = 1) -> Coroutine[Any, Any, Decision]:
        """`check`, awaitable."""
    def apeek(self, key: str, cost: int = 1) -> Coroutine[Any, Any, Decision]:
        """`peek`, awaitable."""
    def ahit(self, key: str, n: int = 1) -> Coroutine[Any, Any, Decision]:
        """`hit`, awaitable."""
    def reset(self, key: str) -> bool:
        """Forgets `key` for every process sharing this limit (and every process's deny cache
        and local fallback forget it, others when they hear it): blocks. Whether Redis held
        a state for it."""
    def areset(self, key: str) -> Coroutine[Any, Any, bool]:
        """`reset`, awaitable."""
    def close(self) -> None:
        """Drops the connection; later calls raise `RuntimeError`."""
    @property
    def closed(self) -> bool: ...
    @property
    def available(self) -> bool:
        """False while Redis is known to be unreachable (calls then fail at once)."""
    @property
    def algorithm(self) -> str: ...
    @property
    def quota(self) -> str: ...
    @property
    def prefix(self) -> str: ...
    @property
    def max_cost(self) -> int: ...
    def __enter__(self: _Redis) -> _Redis: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
        /,
    ) -> Literal[False]: ...
    def __aenter__(self: _Redis) -> Coroutine[Any, Any, _Redis]: ...
    def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
        /,
    ) -> Coroutine[Any, Any, Literal[False]]: ...

@final
class HttpLimiter:
    """The native half of `sluicegate.asgi` and `sluicegate.wsgi`: the library's one HTTP
    decision, built from the middlewares' options, deciding a request from its ASGI scope or
    WSGI environ (and the keys the limits' key functions return for it).

    In-process limits decide at once. Limits on Redis are built at the first request in each
    process, without waiting for Redis; `decide_asgi` and `decide_wsgi` then block with the
    GIL released, and `adecide_asgi` is awaited.
    """

    def __new__(
        cls,
        limits: Iterable[Limit],
        *,
        trusted_proxies: Union[str, Iterable[str], None] = None,
        ipv6_prefix: int = 64,
        forwarded_headers: str = "x-forwarded-for",
        redis: Union[str, Mapping[str, Any], None] = None,
        redis_cluster: bool = False,
        on_backend_error: str = "allow",
        headers: Union[str, bool] = "standard",
        body: str = "text",
        max_keys: Optional[int] = None,
    ) -> HttpLimiter:
        """`ValueError` or `TypeError` naming the option that is wrong and why (a Redis
        URL that cannot be used included). `on_backend_error`: "allow", "deny" or "local";
        `headers`: "standard", "legacy", "both" or False; `body`: "text", "json" or
        "problem+json"; `max_keys`: the most keys each in-process keyed table holds (None:
        1,000,000)."""
    def decide_asgi(self, scope: Mapping[str, Any], request: Any = None) -> HttpVerdict:
        """Decides the request of an ASGI `http` scope (blocks on Redis); key functions get
        `request` when given, else the scope."""
    def adecide_asgi(
        self, scope: Mapping[str, Any], request: Any = None
    ) -> Coroutine[Any, Any, HttpVerdict]:
        """`decide_asgi`, awaitable: for limits on Redis."""
    def decide_wsgi(self, environ: Mapping[str, Any], request: Any = None) -> HttpVerdict:
        """Decides the request of a WSGI environ (blocks on Redis, the GIL released)."""
    def reset(self, key: str) -> bool:
        """Forgets `key` in every limit, quota and tier (blocks on Redis); whether any
        limit held a state for it."""
    def areset(self, key: str) -> Coroutine[Any, Any, bool]:
        """`reset`, awaitable."""
    @property
    def on_backend_error(self) -> Literal["allow", "deny", "local"]:
        """What requests get while Redis cannot decide, as the library read the option."""
    @property
    def remote(self) -> bool:
        """True when the limits live on Redis."""
    @property
    def names(self) -> List[str]:
        """The limits' names, in order."""
    @property
    def backend_errors(self) -> int:
        """Requests Redis could not decide in this process (0 in process)."""
    @property
    def backend_fallbacks(self) -> int:
        """Requests decided in process because Redis could not (`"local"`)."""
    @property
    def backend_available(self) -> bool:
        """False while Redis is known to be unreachable."""

@final
class HttpVerdict:
    """What to do with a request: pass it on (after `wait`) with the rate-limit headers
    added to the app's response, or answer with `status`, `headers` and `body`.

    `bool(verdict)` is `verdict.passes`.
    """

    @property
    def passes(self) -> bool: ...
    @property
    def status(self) -> int:
        """The refusal's status (429, 400, 413, 503, 500); 0 when the request passes."""
    @property
    def status_line(self) -> str:
        """WSGI's status line of a refusal, e.g. "429 Too Many Requests"; "" for a pass."""
    @property
    def wait(self) -> float:
        """Seconds to hold a passing request (a leaky bucket's shaping delay); else 0.0."""
    @property
    def body(self) -> bytes:
        """The refusal's body; b"" for a pass."""
    @property
    def headers(self) -> List[Tuple[bytes, bytes]]:
        """A pass: the rate-limit headers; a refusal: all its headers (ASGI's form)."""
    def asgi_headers(
        self, response: Optional[Iterable[Tuple[bytes, bytes]]] = None,
        status: Optional[int] = None,
    ) -> List[Tuple[bytes, bytes]]:
        """`response`'s headers with these set, replacing any of the same names; `response`
        as it is when `status` is a 429 already carrying `Retry-After` or a rate-limit
        header (a limit inside the app refused it)."""
    def wsgi_headers(
        self, response: Optional[Iterable[Tuple[str, str]]] = None,
        status: Union[str, int, None] = None,
    ) -> List[Tuple[str, str]]:
        """The same in WSGI's form, `(str, str)` pairs (`status`: the status line)."""
    @property
    def limit(self) -> Optional[str]:
        """The limit the headers report (on a 429, the denying one admitting last)."""
    @property
    def quota(self) -> Optional[int]: ...
    @property
    def remaining(self) -> Optional[int]: ...
    @property
    def reset(self) -> Optional[int]:
        """Whole seconds until that limit's quota comes back."""
    @property
    def retry_after(self) -> Optional[int]:
        """A refusal's Retry-After in whole seconds; None for a pass."""
    def with_body(self, body: bytes, content_type: str) -> HttpVerdict:
        """This refusal with another body and Content-Type."""
    def __bool__(self) -> bool: ...

class RedisError(ConnectionError):
    """Redis could not decide: no answer within the timeout, unreachable, or the call was
    refused. `kind` is one of "timeout", "unavailable", "script", "wrong_type", "foreign"."""

    kind: str

def _release_gil_during_checks(release: bool) -> bool:
    """For benchmarks: whether in-process checks release the GIL; returns the old setting."""
