"""sluicegate: the sluicegate rate-limiter engine (Rust) in process, and on Redis.

Every decision is the engine's; this package converts arguments, decisions and errors.
Times are seconds (floats). The ASGI and WSGI middlewares are `sluicegate.asgi` and
`sluicegate.wsgi`.
"""

from ._native import (
    Decision,
    HttpLimiter,
    HttpVerdict,
    KeyedLimiter,
    Limiter,
    ManualClock,
    RedisError,
    RedisLimiter,
)
from .limit import Limit

__all__ = [
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
