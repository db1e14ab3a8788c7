"""What the middlewares and the route helpers share: the options that stay in Python
(`exempt`, `on_breach`, a body written by a function) and the warnings while Redis cannot
decide. Every decision, key, client address and header is the native `HttpLimiter`'s."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._native import HttpLimiter, HttpVerdict

logger = logging.getLogger("sluicegate")

BodyFunction = Callable[[Any, HttpVerdict], Union[str, bytes]]
"""A refusal's body computed from the request and the verdict."""

Body = Union[str, BodyFunction]
"""`"text"` (the library's sentence, text/plain), `"json"` (`{"detail": sentence}`),
`"problem+json"` (RFC 9457), or a function of the request and the verdict returning the
body (its `Content-Type` is `content_type`)."""

RedisOption = Union[str, Mapping[str, Any]]
"""Where the limits live: a Redis URL (`redis://`, `rediss://` for TLS,
`redis-sentinel://host1,host2/#master` through Sentinels), or a dict with `url` and what
reaching it needs: `ca_cert`, `client_cert`, `client_key` (each a PEM file's path, the PEM
text or bytes of it) and `sentinel_username`, `sentinel_password`."""

OUTAGE_WARNING_EVERY = 10.0
"""Seconds between two warnings while Redis cannot decide."""


def native_body(body: Body) -> str:
    """The body the native limiter writes: the one named, or text for a function to replace."""
    if callable(body):
        return "text"
    if not isinstance(body, str):
        raise TypeError(f"body must be a str or a function, got {type(body).__name__}")
    return body


def check_callable(value: Any, option: str) -> None:
    if value is not None and not callable(value):
        raise TypeError(f"{option} must be a function of the request, got "
                        f"{type(value).__name__}")


def rewrite(verdict: HttpVerdict, body: Body, content_type: str, request: Any) -> HttpVerdict:
    """A refusal with the body `body` writes, when it is a function (`429`s only: a missing
    key's `400` and a `503` keep the library's sentence)."""
    if not callable(body) or verdict.status != 429:
        return verdict
    written = body(request, verdict)
    if isinstance(written, str):
        written = written.encode("utf-8")
    return verdict.with_body(written, content_type)


class MiddlewareBase:
    """What both middlewares (ASGI and WSGI) offer beside deciding: their native limiter's
    counters and reset."""

    limiter: HttpLimiter

    @property
    def backend_errors(self) -> int:
        """Requests Redis could not decide in this process since its first request."""
        return self.limiter.backend_errors

    def reset(self, key: str) -> bool:
        """Forgets `key` in every limit (in this process, or on Redis for every process
        sharing the limits): its next request is decided as a new key's. `key` is written as
        the limits write it: a client address (`"ip"` keys, grouped by `ipv6_prefix`), a
        header's value, what a key function returned. Returns whether any limit held it."""
        return self.limiter.reset(key)


@dataclass(frozen=True)
class BackendFailure:
    """What `on_backend_failure` is called with: the limits on Redis, and how Redis fares."""

    limits: Tuple[str, ...]
    """The names of the limits Redis decides."""
    failed: int
    """Requests Redis could not decide since the previous report (0 when it `recovered`)."""
    total: int
    """Requests Redis could not decide since the limits were built in this process (the
    middleware's `backend_errors`)."""
    on_backend_error: str
    """What those requests got: `"allow"` (let through uncounted), `"deny"` (`503`) or
    `"local"` (decided in this process)."""
    recovered: bool
    """True for the one report when Redis decides again after failing."""


BackendFailureHook = Callable[[BackendFailure], Any]
"""`on_backend_failure`: called (in the request that noticed) where the warning is logged."""


class Outage:
    """Reports, while the limiter's Redis cannot decide, at most every
    `OUTAGE_WARNING_EVERY` seconds, and once when it decides again: a warning on the logger
    `sluicegate`, and a call of `on_backend_failure` when given."""

    def __init__(self, limiter: HttpLimiter,
                 on_backend_failure: Optional[BackendFailureHook] = None) -> None:
        if on_backend_failure is not None and not callable(on_backend_failure):
            raise TypeError("on_backend_failure must be a function of a BackendFailure, got "
                            f"{type(on_backend_failure).__name__}")
        self.limiter = limiter
        self.on_backend_error = limiter.on_backend_error
        self.hook = on_backend_failure
        self.seen = 0
        # The count at the last report: each report tells the failures since the one before.
        self.reported = 0
        self.warned_at: Optional[float] = None
        self.lock = threading.Lock()

    def check(self) -> None:
        errors = self.limiter.backend_errors
        if errors == self.seen and self.warned_at is None:
            return
        report: Optional[BackendFailure] = None
        with self.lock:
            now = time.monotonic()
            names = tuple(self.limiter.names)
            if errors > self.seen:
                self.seen = errors
                if self.warned_at is None or now - self.warned_at >= OUTAGE_WARNING_EVERY:
                    self.warned_at = now
                    new = errors - self.reported
                    self.reported = errors
                    then = {"allow": "let through uncounted",
                            "deny": "refused with 503",
                            "local": "decided in this process"}[self.on_backend_error]
                    logger.warning(
                        "Redis cannot decide the limits %s: %d request(s) %s "
                        "(on_backend_error=%r); %d since the limits were built",
                        ", ".join(names), new, then, self.on_backend_error, errors)
                    report = BackendFailure(names, new, errors, self.on_backend_error, False)
            elif self.warned_at is not None and self.limiter.backend_available:
                self.warned_at = None
                logger.warning("Redis decides the limits %s again", ", ".join(names))
                report = BackendFailure(names, 0, errors, self.on_backend_error, True)
        if report is not None and self.hook is not None:
            try:
                self.hook(report)
            except Exception:  # a report must never fail the request that noticed
                logger.exception("on_backend_failure raised")


def build(limits: Sequence[Any], *, trusted_proxies: Any, ipv6_prefix: int,
          forwarded_headers: str, redis: Optional[RedisOption], redis_cluster: bool,
          on_backend_error: str, headers: Union[str, bool, None], body: Body,
          max_keys: Optional[int] = None) -> HttpLimiter:
    return HttpLimiter(
        limits,
        trusted_proxies=trusted_proxies,
        ipv6_prefix=ipv6_prefix,
        forwarded_headers=forwarded_headers,
        redis=redis,
        redis_cluster=redis_cluster,
        on_backend_error=on_backend_error,
        headers=False if headers is None else headers,
        body=native_body(body),
        max_keys=max_keys,
    )


def as_list(limits: Any) -> List[Any]:
    """`limits` as a list, leaving a str or a dict for the native check to explain."""
    if isinstance(limits, (str, bytes, dict)) or not hasattr(limits, "__iter__"):
        return limits  # type: ignore[no-any-return]
    return list(limits)
