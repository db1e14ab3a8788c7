"""Django REST framework throttles decided by the library: `SluicegateRateThrottle`, a
`SimpleRateThrottle` whose counts are the engine's, and `AnonRateThrottle`,
`UserRateThrottle` and `ScopedRateThrottle` on it.

```python
REST_FRAMEWORK = {
    "DEFAULT_THROTTLE_CLASSES": ["sluicegate.drf.AnonRateThrottle",
                                 "sluicegate.drf.UserRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"anon": "100/day", "user": "1000/day"},
}
SLUICEGATE_DRF = {"redis": "redis://127.0.0.1:6379/"}   # optional: shared by every process
```

DRF's own code reads the rates, scopes and keys (`get_rate`, `parse_rate`,
`get_cache_key`, `cache_format`, overridable as in DRF); the decision is one check of a
native `KeyedLimiter` (in process) or `RedisLimiter` per rate, `wait()` is the engine's
exact `retry_after`, and `get_ident` is the client address as the library resolves it
(`settings.SLUICEGATE["trusted_proxies"]`), not DRF's `NUM_PROXIES` reading of
`X-Forwarded-For`.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Tuple, Union

from django.conf import settings  # type: ignore[import-untyped, unused-ignore]
from django.core.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    ImproperlyConfigured)
from rest_framework import throttling  # type: ignore[import-untyped, unused-ignore]

from . import KeyedLimiter, RedisLimiter
from ._django_settings import Cached, client_address, when_settings_change
from ._native import Decision, ManualClock, RedisError

__all__ = ["AnonRateThrottle", "ScopedRateThrottle", "SluicegateRateThrottle",
           "UserRateThrottle", "reset_throttles"]

logger = logging.getLogger("sluicegate")

if TYPE_CHECKING:
    class _SimpleRateThrottle:
        """DRF's `SimpleRateThrottle` as type checkers see it here (DRF ships no types)."""

        rate: Optional[str]
        scope: Optional[str]
        THROTTLE_RATES: Dict[str, Optional[str]]
        cache_format: str
        num_requests: Optional[int]
        duration: Optional[int]
        key: Optional[str]

        def timer(self) -> float: ...
        def get_rate(self) -> Optional[str]: ...
        def parse_rate(self, rate: Optional[str]) -> Tuple[Optional[int], Optional[int]]: ...
        def get_cache_key(self, request: Any, view: Any) -> Optional[str]: ...
        def throttle_failure(self) -> bool: ...
else:
    _SimpleRateThrottle = throttling.SimpleRateThrottle

SETTING = "SLUICEGATE_DRF"
OPTIONS = frozenset({"redis", "redis_cluster", "prefix", "timeout", "algorithm",
                     "on_backend_error", "max_keys"})
DEFAULT_ALGORITHM = "sliding-log"
"""DRF's own throttle keeps the times of the accepted requests and admits at most the rate
in any trailing period: the sliding log is that count, exact."""
DEFAULT_PREFIX = "sluicegate:drf:"
WARNING_EVERY = 10.0
"""Seconds between two warnings while Redis cannot decide."""

AnyLimiter = Union[KeyedLimiter, RedisLimiter]


def _read_settings() -> Dict[str, Any]:
    """`settings.SLUICEGATE_DRF` (`{}` when unset), its unknown keys refused."""
    found = getattr(settings, SETTING, None) or {}
    if not isinstance(found, dict):
        raise ImproperlyConfigured(f"settings.{SETTING} must be a dict, got "
                                   f"{type(found).__name__}")
    unknown = sorted(set(found) - OPTIONS)
    if unknown:
        raise ImproperlyConfigured(
            f"settings.{SETTING} has unknown option(s) {', '.join(map(repr, unknown))}; "
            f"the options are {', '.join(sorted(OPTIONS))}")
    on_error = found.get("on_backend_error", "allow")
    if on_error not in ("allow", "deny"):
        raise ImproperlyConfigured(f"settings.{SETTING}['on_backend_error'] must be 'allow' "
                                   f"or 'deny', got {on_error!r}")
    return dict(found)


_settings = Cached(_read_settings)
when_settings_change(_settings.clear)


def drf_settings() -> Dict[str, Any]:
    """`settings.SLUICEGATE_DRF` as read at the first request since it last changed."""
    read: Dict[str, Any] = _settings.get()
    return read


REDIS_KEYS = ("ca_cert", "client_cert", "client_key", "sentinel_username",
              "sentinel_password")
"""What a `redis` dict may hold beside `url`: `RedisLimiter`'s keywords of the same names."""


def _redis_target(redis: Any) -> Tuple[str, Dict[str, Any]]:
    """`SLUICEGATE_DRF["redis"]`, a URL or a dict `{url, ca_cert, ...}` (the middleware's
    `redis` option), as `RedisLimiter`'s URL and keywords."""
    if isinstance(redis, str):
        return redis, {}
    if not isinstance(redis, Mapping) or "url" not in redis:
        raise ImproperlyConfigured(f"settings.{SETTING}['redis'] must be a Redis URL or a dict "
                                   "with 'url'")
    unknown = sorted(set(redis) - {"url", *REDIS_KEYS})
    if unknown:
        raise ImproperlyConfigured(
            f"settings.{SETTING}['redis'] has unknown key(s) {', '.join(map(repr, unknown))};"
            f" beside 'url' it may hold {', '.join(REDIS_KEYS)}")
    return str(redis["url"]), {name: redis[name] for name in REDIS_KEYS if name in redis}


class _Limiters:
    """One limiter per (quota, algorithm, clock) in this process, shared by every throttle
    using it (their keys, which hold the scope, keep them apart), built at first use."""

    def __init__(self) -> None:
        self._built: Dict[Tuple[str, str, int], Tuple[AnyLimiter, Any]] = {}
        self._lock = threading.Lock()
        self._warned_at: Optional[float] = None

    def get(self, quota: str, algorithm: Optional[str],
            clock: Optional[ManualClock]) -> AnyLimiter:
        options = drf_settings()
        chosen = algorithm or options.get("algorithm") or DEFAULT_ALGORITHM
        index = (quota, chosen, id(clock))
        found = self._built.get(index)
        if found is None:
            with self._lock:
                found = self._built.get(index)
                if found is None:
                    # The clock is kept beside its limiter so that its id is never reused.
                    found = (self._build(quota, chosen, clock, options), clock)
                    self._built[index] = found
        return found[0]

    @staticmethod
    def _build(quota: str, algorithm: str, clock: Optional[ManualClock],
               options: Dict[str, Any]) -> AnyLimiter:
        redis = options.get("redis")
        if redis is None:
            return KeyedLimiter(quota, algorithm=algorithm, clock=clock,
                                max_keys=options.get("max_keys"))
        url, reaching = _redis_target(redis)
        # Each quota under its own prefix: DRF keys two throttles of one scope alike.
        prefix = f"{options.get('prefix', DEFAULT_PREFIX)}{quota.replace('/', '-')}:"
        return RedisLimiter(quota, url=url, algorithm=algorithm, prefix=prefix,
                            cluster=bool(options.get("redis_cluster", False)),
                            timeout=float(options.get("timeout", 0.1)), clock=clock,
                            lazy=True, **reaching)

    def clear(self) -> None:
        with self._lock:
            self._built = {}

    def failed(self, error: RedisError) -> bool:
        """Whether a request Redis could not decide goes ahead (`on_backend_error`), warning
        at most every `WARNING_EVERY` seconds."""
        allow: bool = drf_settings().get("on_backend_error", "allow") == "allow"
        now = time.monotonic()
        if self._warned_at is None or now - self._warned_at >= WARNING_EVERY:
            self._warned_at = now
            logger.warning("Redis cannot decide the DRF throttles (%s): requests %s "
                           "(SLUICEGATE_DRF['on_backend_error']=%r)", error,
                           "let through" if allow else "throttled",
                           "allow" if allow else "deny")
        return allow


_limiters = _Limiters()
when_settings_change(_limiters.clear)


def reset_throttles() -> None:
    """Drops every throttle's in-process counts (DRF's tests call `cache.clear()` for
    this); counts on Redis stay (reset a key there with `RedisLimiter.reset`)."""
    _limiters.clear()


class SluicegateRateThrottle(_SimpleRateThrottle):
    """DRF's `SimpleRateThrottle`, decided by the library: subclass it and override
    `get_cache_key(request, view)` as in DRF (None: not throttled); `rate` or `scope` (read
    from `REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]`, `"100/day"`, `"5/min"`, `"10/s"`: DRF's
    `parse_rate`, which reads the unit's first letter) as in DRF.

    `algorithm`: the library's algorithm (default `SLUICEGATE_DRF["algorithm"]`, else
    `"sliding-log"`: at most the rate in any trailing period, as DRF counts). `timer`, as
    in DRF, for tests: when a class overrides it (`timer = lambda self: 0`, as DRF's own
    tests do), its throttles decide on a `sluicegate.ManualClock` of the class's own, set
    to `timer()` before each decision (left alone, the engine's clock decides). After a
    refusal, `wait()` is the engine's exact wait, which DRF sends as `Retry-After`
    (rounded up) and in its message.
    """

    algorithm: Optional[str] = None
    decision: Optional[Decision] = None
    """The engine's decision of the last `allow_request`: None before one, for a request
    this throttle does not count (no rate, or no key), and when Redis could not answer."""

    def allow_request(self, request: Any, view: Any) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        limiter = _limiters.get(f"{self.num_requests}/{self.duration}s", self.algorithm,
                                self._clock())
        try:
            self.decision = limiter.check(str(self.key))
        except RedisError as error:
            self.decision = None
            if _limiters.failed(error):
                return True
            self._backend_wait = 1.0
            return bool(self.throttle_failure())
        if self.decision.allowed:
            return True
        return bool(self.throttle_failure())

    def _clock(self) -> Optional[ManualClock]:
        """None (the engine's clock), or, when `timer` is overridden, the class's manual
        clock set to its time."""
        if self.timer is time.time:
            return None
        cls = type(self)
        clock: Optional[ManualClock] = cls.__dict__.get("_sluicegate_clock")
        if clock is None:
            clock = ManualClock()
            setattr(cls, "_sluicegate_clock", clock)
        clock.set(float(self.timer()))
        return clock

    def wait(self) -> Optional[float]:
        """Seconds until this request would be admitted (the engine's `retry_after`); None
        after an admitted one."""
        if self.decision is None:
            return getattr(self, "_backend_wait", None)
        return self.decision.retry_after

    def get_ident(self, request: Any) -> Optional[str]:
        """The client address as the library resolves it: `REMOTE_ADDR`, and the
        forwarding headers that `settings.SLUICEGATE["trusted_proxies"]` write only."""
        return client_address(request.META)


if TYPE_CHECKING:
    class AnonRateThrottle(SluicegateRateThrottle):
        pass

    class UserRateThrottle(SluicegateRateThrottle):
        pass

    class ScopedRateThrottle(SluicegateRateThrottle):
        scope_attr: str
else:
    class AnonRateThrottle(SluicegateRateThrottle, throttling.AnonRateThrottle):
        """DRF's `AnonRateThrottle` (scope `"anon"`; authenticated requests not
        throttled), decided by the library."""

    class UserRateThrottle(SluicegateRateThrottle, throttling.UserRateThrottle):
        """DRF's `UserRateThrottle` (scope `"user"`; the user's pk, else the client
        address), decided by the library."""

    class ScopedRateThrottle(throttling.ScopedRateThrottle, SluicegateRateThrottle):
        """DRF's `ScopedRateThrottle` (the view's `throttle_scope`; views without one are
        not throttled), decided by the library."""
