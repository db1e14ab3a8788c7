"""sluicegate: the sluicegate rate-limiter engine (Rust) in process, and on Redis.

Every decision is the engine's; this package converts arguments, decisions and errors.
Times are seconds (floats).
"""

from ._native import Decision, KeyedLimiter, Limiter, ManualClock, RedisError, RedisLimiter

__all__ = ["Decision", "KeyedLimiter", "Limiter", "ManualClock", "RedisError", "RedisLimiter"]
