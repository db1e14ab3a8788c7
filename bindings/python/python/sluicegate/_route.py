"""The route helpers' core (`sluicegate.fastapi.limit`, `sluicegate.flask.limit`): the
limits of one route in one native `HttpLimiter` (several quotas decided all-or-nothing; a
quota chosen per request among `quotas`, each a tier with its own tables), and the names of
limits given none, taken from their route."""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ._common import Body, BackendFailureHook, Outage, RedisOption, build, check_callable
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
                 redis: Optional[RedisOption], redis_cluster: bool, on_backend_error: str,
                 trusted_proxies: Any, ipv6_prefix: int, forwarded_headers: str,
                 headers: Union[str, bool, None], body: Body,
                 max_keys: Optional[int] = None,
                 on_backend_failure: Optional[BackendFailureHook] = None) -> None:
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
            if not all(isinstance(one, str) for one in several):
                raise TypeError("limit()'s quota must be a str, a list of str or a function")
            # One limit of several quotas: the library names them NAME-1, NAME-2...
            limits = [limit(name, "; ".join(several))]
        self.limiter: HttpLimiter = build(
            limits, trusted_proxies=trusted_proxies, ipv6_prefix=ipv6_prefix,
            forwarded_headers=forwarded_headers, redis=redis, redis_cluster=redis_cluster,
            on_backend_error=on_backend_error, headers=headers, body=body, max_keys=max_keys)
        self.remote = redis is not None
        self.outage = Outage(self.limiter, on_backend_failure)

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


MAX_ROUTE_NAME = 60
"""The longest name taken from a route: a limit's name is at most 64 characters, and a limit
of several quotas adds `-1`, `-2`... to it."""

_PARAMETER = re.compile(r"\{([^{}:]+)(?::[^{}]*)?\}|<(?:[^<>:]+:)?([^<>:]+)>")
"""A path parameter: Starlette's `{id}`, `{path:path}`; Flask's `<id>`, `<int:id>`."""


def route_name(methods: Iterable[str], template: str) -> str:
    """The name of a limit given none, from its route: the methods (without the `HEAD` and
    `OPTIONS` a framework adds to a route of other methods) and the path template, its
    parameters written `:name` (`"GET /users/:id"`, whichever framework; braces would move
    Redis Cluster's hash tag). A name longer than `MAX_ROUTE_NAME` keeps its beginning and a
    hash of the whole, so that two long routes still count apart."""
    upper = {method.upper() for method in methods}
    named = sorted(upper - {"HEAD", "OPTIONS"}) or sorted(upper)
    path = _PARAMETER.sub(lambda m: ":" + (m.group(1) or m.group(2)), template)
    name = f"{','.join(named)} {path}".strip()
    if len(name) <= MAX_ROUTE_NAME:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{name[:MAX_ROUTE_NAME - 9]}~{digest}"


class RouteLimits:
    """The limiters of one `limit(...)`: with a `name`, one, shared by every route it limits;
    without, one per route, named by `route_name` (so two routes never share a count, in
    process or on Redis), built at the route's first request in this process. Routes of the
    same methods and path template share one."""

    def __init__(self, make: Callable[[str], RouteLimit], name: Optional[str],
                 fallback: str) -> None:
        self._make = make
        self.named = name is not None
        # Built now, so that a mistake in the options fails where `limit(...)` is called; the
        # limiter of every route when the limit has a name, else of a request whose route
        # is unknown.
        self.fallback = make(name if name is not None else fallback)
        self._by_name: Dict[str, RouteLimit] = {}
        # By the route's id (routes define `__eq__` without `__hash__`) and prefix, with the
        # route itself, which keeps the id from being reused.
        self._by_route: Dict[Tuple[int, str], Tuple[Any, RouteLimit]] = {}
        self._lock = threading.Lock()

    def for_route(self, route: Any, prefix: str,
                  describe: Callable[[], Tuple[Iterable[str], str]]) -> RouteLimit:
        """The limiter of `route` (an object standing for the route, `None` when unknown)
        under the path `prefix` (where the app is mounted); `describe()` gives the route's
        methods and path template the first time."""
        if self.named or route is None:
            return self.fallback
        found = self._by_route.get((id(route), prefix))
        if found is None:
            methods, template = describe()
            return self._add(route, prefix, route_name(methods, prefix + template))
        return found[1]

    def _add(self, route: Any, prefix: str, name: str) -> RouteLimit:
        with self._lock:
            limit = self._by_name.get(name)
            if limit is None:
                limit = self._make(name)
                self._by_name[name] = limit
            self._by_route[(id(route), prefix)] = (route, limit)
            return limit

    def all(self) -> List[RouteLimit]:
        """Every limiter built: the shared one, or the routes' (and, in process, the
        fallback, which costs nothing to ask)."""
        with self._lock:
            routes = list(self._by_name.values())
        if self.named or not self.fallback.remote:
            routes.insert(0, self.fallback)
        return routes

    def reset(self, key: str) -> bool:
        """Forgets `key` in every limiter built (on Redis, for every process sharing them).
        Returns whether any held a state."""
        held = False
        for route in self.all():
            held = route.reset(key) or held
        return held

    async def areset(self, key: str) -> bool:
        """`reset` for an event loop."""
        held = False
        for route in self.all():
            held = await route.areset(key) or held
        return held

    @property
    def backend_errors(self) -> int:
        """Requests Redis could not decide, over every limiter built."""
        return sum(route.backend_errors for route in self.all())
