"""The route helpers' core (`sluicegate.fastapi.limit`, `sluicegate.flask.limit`): the
limits of one route in one native `HttpLimiter` (several quotas decided all-or-nothing),
or, for a quota chosen per request, one prebuilt `HttpLimiter` per quota it may choose."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from ._common import Body, Outage, build, check_callable
from ._native import HttpLimiter

Quota = Union[str, Sequence[str]]
"""A quota string, or several decided all-or-nothing (`["5/minute", "100/hour"]`)."""

QuotaFunction = Callable[[Any], str]
"""A quota chosen per request, among `quotas`."""


class RouteLimit:
    """The limiters of one `limit(...)`."""

    def __init__(self, quota: Union[Quota, QuotaFunction], *, name: str, key: Any,
                 algorithm: Optional[str], cost: int, quotas: Optional[Sequence[str]],
                 redis: Optional[str], redis_cluster: bool, on_backend_error: str,
                 trusted_proxies: Any, ipv6_prefix: int, forwarded_headers: str,
                 headers: Union[str, bool, None], body: Body) -> None:
        options = dict(trusted_proxies=trusted_proxies, ipv6_prefix=ipv6_prefix,
                       forwarded_headers=forwarded_headers, redis=redis,
                       redis_cluster=redis_cluster, on_backend_error=on_backend_error,
                       headers=headers, body=body)
        self.on_backend_error = on_backend_error

        def limits(chosen: Quota) -> List[Dict[str, Any]]:
            several = [chosen] if isinstance(chosen, str) else list(chosen)
            if not several:
                raise ValueError("limit() needs at least one quota")
            return [{"name": name if len(several) == 1 else f"{name}-{i + 1}", "key": key,
                     "quota": one, "algorithm": algorithm or "gcra", "cost": cost}
                    for i, one in enumerate(several)]

        self.choose: Optional[QuotaFunction] = None
        self.limiters: Dict[Optional[str], HttpLimiter] = {}
        if callable(quota):
            if not quotas or isinstance(quotas, str):
                raise ValueError("a quota given as a function of the request needs quotas=, "
                                 "the list of quota strings it may return")
            self.choose = quota
            for one in quotas:
                self.limiters[one] = build(limits(one), **options)  # type: ignore[arg-type]
        else:
            if quotas is not None:
                raise ValueError("quotas= goes with a quota given as a function")
            self.limiters[None] = build(limits(quota), **options)  # type: ignore[arg-type]
        self.remote = redis is not None
        self.outages = {chosen: Outage(limiter, on_backend_error)
                        for chosen, limiter in self.limiters.items()}

    def limiter_for(self, request: Any) -> HttpLimiter:
        if self.choose is None:
            return self.limiters[None]
        chosen = self.choose(request)
        try:
            return self.limiters[chosen]
        except KeyError:
            raise ValueError(f"the quota function returned {chosen!r}, which is not one of "
                             f"quotas= {list(self.limiters)}") from None

    def decided(self, limiter: HttpLimiter) -> None:
        """After a decision on Redis: warns while it cannot decide."""
        if self.remote:
            for outage in self.outages.values():
                if outage.limiter is limiter:
                    outage.check()

    @property
    def backend_errors(self) -> int:
        return sum(limiter.backend_errors for limiter in self.limiters.values())


def check_functions(exempt: Any, on_breach: Any) -> None:
    check_callable(exempt, "exempt")
    check_callable(on_breach, "on_breach")
