"""The route helpers' core (`sluicegate.fastapi.limit`, `sluicegate.flask.limit`): the
limits of one route in one native `HttpLimiter` (several quotas decided all-or-nothing; a
quota chosen per request among `quotas`, each a tier with its own tables)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from ._common import Body, Outage, build, check_callable
from ._native import HttpLimiter

Quota = Union[str, Sequence[str]]
"""A quota string (`"5/minute"`, or several decided all-or-nothing: `"5/minute; 100/hour"`),
or a list of them, decided all-or-nothing too (`["5/minute", "100/hour"]`)."""

QuotaFunction = Callable[[Any], str]
"""A quota chosen per request, among `quotas`."""


class RouteLimit:
    """The limiter of one `limit(...)`."""

    def __init__(self, quota: Union[Quota, QuotaFunction], *, name: str, key: Any,
                 algorithm: Optional[str], cost: int, quotas: Optional[Sequence[str]],
                 redis: Optional[str], redis_cluster: bool, on_backend_error: str,
                 trusted_proxies: Any, ipv6_prefix: int, forwarded_headers: str,
                 headers: Union[str, bool, None], body: Body,
                 max_keys: Optional[int] = None) -> None:
        self.on_backend_error = on_backend_error

        def limit(limit_name: str, chosen: Any) -> Dict[str, Any]:
            one = {"name": limit_name, "key": key, "quota": chosen,
                   "algorithm": algorithm or "gcra", "cost": cost}
            if quotas is not None:
                one["quotas"] = quotas
            return one

        limits: List[Dict[str, Any]]
        if callable(quota):
            if quotas is None:
                raise ValueError("a quota given as a function of the request needs quotas=, "
                                 "the list of quota strings it may return")
            limits = [limit(name, quota)]
        else:
            if quotas is not None:
                raise ValueError("quotas= goes with a quota given as a function")
            several = [quota] if isinstance(quota, str) else list(quota)
            if not several:
                raise ValueError("limit() needs at least one quota")
            limits = [limit(name if len(several) == 1 else f"{name}-{i + 1}", one)
                      for i, one in enumerate(several)]
        self.limiter: HttpLimiter = build(
            limits, trusted_proxies=trusted_proxies, ipv6_prefix=ipv6_prefix,
            forwarded_headers=forwarded_headers, redis=redis, redis_cluster=redis_cluster,
            on_backend_error=on_backend_error, headers=headers, body=body, max_keys=max_keys)
        self.remote = redis is not None
        self.outage = Outage(self.limiter, on_backend_error)

    def decided(self) -> None:
        """After a decision on Redis: warns while it cannot decide."""
        if self.remote:
            self.outage.check()

    def reset(self, key: str) -> bool:
        """Forgets `key` in this limit (every quota and tier of it; on Redis, for every
        process sharing it). Returns whether it held a state."""
        return self.limiter.reset(key)

    async def areset(self, key: str) -> bool:
        """`reset` for an event loop."""
        return await self.limiter.areset(key)

    @property
    def backend_errors(self) -> int:
        return self.limiter.backend_errors


def check_functions(exempt: Any, on_breach: Any) -> None:
    check_callable(exempt, "exempt")
    check_callable(on_breach, "on_breach")
