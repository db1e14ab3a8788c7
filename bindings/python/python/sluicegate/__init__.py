"""sluicegate: the sluicegate rate-limiter engine (Rust) in process, and on Redis.

Every decision is the engine's; this package converts arguments, decisions and errors.
Times are seconds (floats). The ASGI and WSGI middlewares are `sluicegate.asgi` and
`sluicegate.wsgi`; per-route limits are `sluicegate.fastapi` and `sluicegate.flask`; Django's
middleware and `@ratelimit` are `sluicegate.django`, DRF's throttles `sluicegate.drf`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from . import _native
from ._common import BackendFailure
from ._native import Decision, HttpLimiter, HttpVerdict, ManualClock, RedisError
from ._waiting import Acquire, _Queues, acquire_async, wait_blocking
from .limit import Limit

__all__ = [
    "Acquire",
    "BackendFailure",
    "Decision",
    "HttpLimiter",
    "HttpVerdict",
    "KeyedLimiter",
    "Limit",
    "Limiter",
    "ManualClock",
    "RedisError",
    "RedisLimiter",
]


if TYPE_CHECKING:
    __version__: str
    """The installed distribution's version, as pip names it."""
else:
    def __getattr__(name: str) -> str:
        # Read from the distribution's metadata when first asked, not at every import.
        if name == "__version__":
            from importlib.metadata import version
            found = version("sluicegate")
            globals()["__version__"] = found
            return found
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    # The public names only: not the names this module imports for its own use.
    return sorted([*__all__, "__version__"])


def _queues(limiter: object) -> _Queues:
    queues: _Queues = limiter.__dict__.setdefault("_sluicegate_waiting", _Queues())
    return queues


class Limiter(_native.Limiter):
    __doc__ = _native.Limiter.__doc__

    def acquire(self, cost: int = 1) -> Acquire:
        """Waits (asyncio) until `cost` is admitted, then consumes it: `await
        limiter.acquire()` or `async with limiter.acquire():`. Callers are served in the
        order they came; a cancelled wait consumes nothing."""
        async def check() -> Decision:
            return self.check(cost)
        return Acquire(lambda: acquire_async(_queues(self), None, check))

    def wait(self, cost: int = 1, timeout: Optional[float] = None) -> Optional[Decision]:
        """Blocks until `cost` is admitted and consumes it; `None` (nothing consumed) when
        it would not be admitted within `timeout` seconds."""
        return wait_blocking(_queues(self), None, lambda: self.check(cost), timeout)


class KeyedLimiter(_native.KeyedLimiter):
    __doc__ = _native.KeyedLimiter.__doc__

    def acquire(self, key: str, cost: int = 1) -> Acquire:
        """Waits (asyncio) until `cost` is admitted for `key`, then consumes it: `await
        limiter.acquire(key)` or `async with limiter.acquire(key):`. Callers of one key are
        served in the order they came; a cancelled wait consumes nothing."""
        async def check() -> Decision:
            return self.check(key, cost)
        return Acquire(lambda: acquire_async(_queues(self), key, check))

    def wait(self, key: str, cost: int = 1,
             timeout: Optional[float] = None) -> Optional[Decision]:
        """Blocks until `cost` is admitted for `key` and consumes it; `None` (nothing
        consumed) when it would not be admitted within `timeout` seconds."""
        return wait_blocking(_queues(self), key, lambda: self.check(key, cost), timeout)


class RedisLimiter(_native.RedisLimiter):
    __doc__ = _native.RedisLimiter.__doc__

    def acquire(self, key: str, cost: int = 1) -> Acquire:
        """`KeyedLimiter.acquire` on Redis (each check awaited with `acheck`); first come
        first served among this process's callers of `key`."""
        return Acquire(lambda: acquire_async(_queues(self), key,
                                             lambda: self.acheck(key, cost)))

    def wait(self, key: str, cost: int = 1,
             timeout: Optional[float] = None) -> Optional[Decision]:
        """`KeyedLimiter.wait` on Redis (blocking checks, the GIL released)."""
        return wait_blocking(_queues(self), key, lambda: self.check(key, cost), timeout)
