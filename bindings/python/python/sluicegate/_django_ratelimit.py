"""django-ratelimit's `@ratelimit(key=..., rate=..., method=..., block=..., group=...)` over
the library's HTTP decision: each (group, rate, methods) is one native `HttpLimiter`, which
resolves the client address, decides and writes the headers; this module reads
django-ratelimit's arguments and turns its rate syntax into a quota string."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import re
import sys
import threading
import time
from typing import (TYPE_CHECKING, Any, Callable, Dict, List, Optional, Protocol, Sequence,
                    Tuple, TypeVar, Union, cast)

from asgiref.sync import iscoroutinefunction
from django.core.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    ImproperlyConfigured, PermissionDenied)
from django.utils.module_loading import (  # type: ignore[import-untyped, unused-ignore]
    import_string)

from ._common import Outage, build, rewrite
from ._django_responses import adecide, refusal, with_headers
from ._django_settings import sluicegate_settings, when_settings_change
from ._native import HttpLimiter, HttpVerdict

__all__ = ["ALL", "UNSAFE", "RatelimitedView", "Ratelimited", "quota_of", "ratelimit"]

ALL = None
"""`method=ALL`: every method counts (django-ratelimit's `ALL`)."""

UNSAFE = ["DELETE", "PATCH", "POST", "PUT"]
"""`method=UNSAFE`: the methods that change something (django-ratelimit's `UNSAFE`)."""

Rate = Union[str, Tuple[int, int], Callable[[Optional[str], Any], Any], None]
Key = Union[str, Callable[[Optional[str], Any], Optional[str]]]

if TYPE_CHECKING:
    from typing_extensions import ParamSpec
elif sys.version_info >= (3, 10):
    from typing import ParamSpec
else:  # Python 3.9: the annotations using it are never evaluated at run time.
    def ParamSpec(name: str) -> Any:
        return TypeVar(name)

Params = ParamSpec("Params")
Returned = TypeVar("Returned", covariant=True)

_RATE = re.compile(r"(\d+)/(\d*)([smhd])?")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_NAME = 64
"""The longest limit name the library takes."""


class Ratelimited(PermissionDenied):  # type: ignore[misc]
    """Raised by `@ratelimit(block=True)` when `settings.SLUICEGATE["ratelimit_raise"]` is
    true, as django-ratelimit raises its `Ratelimited` (Django answers `403`, or your
    `handler403`). `verdict` is the library's refusal (its status, headers, body)."""

    def __init__(self, verdict: HttpVerdict) -> None:
        super().__init__(verdict.body.decode("utf-8", "replace"))
        self.verdict = verdict


def quota_of(rate: Union[str, Tuple[int, int]]) -> str:
    """django-ratelimit's rate (`"5/m"`, `"100/h"`, `"5/10m"`, `"10/s"`, `"1000/d"`, `"5/"`
    for per second, or a tuple `(count, seconds)`) as a quota string the library reads:
    `"5/60s"`."""
    if isinstance(rate, tuple):
        count, seconds = rate
    else:
        found = _RATE.match(rate) if isinstance(rate, str) else None
        if found is None:
            raise ImproperlyConfigured(
                f"ratelimit rate {rate!r} is not a rate: write COUNT/PERIOD, as '5/m', "
                "'100/h', '5/10m' (s, m, h, d)")
        count = int(found.group(1))
        seconds = _SECONDS[(found.group(3) or "s").lower()] * int(found.group(2) or 1)
    if seconds <= 0:
        raise ImproperlyConfigured("Ratelimit period must be greater than 0")
    return f"{count}/{seconds}s"


def _group_of(view: Callable[..., Any]) -> str:
    """django-ratelimit's default group: the view's module and qualified name."""
    return f"{getattr(view, '__module__', '')}.{view.__qualname__}"


def _name(group: str, quota: str, methods: Optional[Sequence[str]]) -> str:
    """The limit's name (in the headers and on Redis): what django-ratelimit keys its count
    by beside the key's value; over 64 characters, its start and a hash of the whole."""
    name = f"{group} {quota}" + (f" {','.join(methods)}" if methods else "")
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{name[:MAX_NAME - 9]}~{digest}"


def _key(key: Key, group: str) -> Any:
    """The library's key for django-ratelimit's: `"ip"` and `"header:NAME"` are the
    library's own; the others are functions of the Django request (and of the client
    address, as the library resolved it, for `"user_or_ip"`)."""
    if callable(key):
        return lambda request: key(group, request)
    if not isinstance(key, str) or not key:
        raise ImproperlyConfigured("Ratelimit key must be specified")
    if key == "ip" or key.startswith("header:"):
        return key
    if key == "user":
        return lambda request: (str(request.user.pk) if request.user.is_authenticated
                                else None)
    if key == "user_or_ip":
        return lambda request, client: (str(request.user.pk) if request.user.is_authenticated
                                        else client)
    if key.startswith("get:"):
        field = key[4:]
        return lambda request: request.GET.get(field)
    if key.startswith("post:"):
        field = key[5:]
        return lambda request: request.POST.get(field)
    if ":" in key:
        raise ImproperlyConfigured(f"Unknown ratelimit key: {key}")
    if "." in key:
        function = import_string(key)
        return lambda request: function(group, request)
    raise ImproperlyConfigured(f"Could not understand ratelimit key: {key}")


def _methods(method: Union[str, Sequence[str], None]) -> Optional[List[str]]:
    if method is ALL:
        return None
    listed = [method] if isinstance(method, str) else list(method)
    return sorted({m.upper() for m in listed})


class ViewLimits:
    """The limiters of one `@ratelimit(...)`: one per quota its rate gives (one, unless the
    rate is a function of the request), built at first use from `settings.SLUICEGATE`."""

    def __init__(self, group: str, key: Key, rate: Rate, methods: Optional[List[str]],
                 algorithm: Optional[str]) -> None:
        self.group = group
        self.key = _key(key, group)
        self.rate = import_string(rate) if isinstance(rate, str) and "." in rate else rate
        self.methods = methods
        self.algorithm = algorithm
        if isinstance(self.rate, (str, tuple)):
            quota_of(self.rate)  # a bad rate fails where the view is decorated
        self._limiters: Dict[str, Tuple[HttpLimiter, Outage]] = {}
        self._lock = threading.Lock()
        when_settings_change(self.clear)

    def clear(self) -> None:
        with self._lock:
            self._limiters = {}

    def reset(self, key: str) -> bool:
        """Forgets `key` (as the limit writes it: a client address, a header's value, what
        a key function returned) in every limiter built (on Redis, for every process).
        Returns whether any held it."""
        held = False
        for limiter, _ in list(self._limiters.values()):
            held = limiter.reset(key) or held
        return held

    def limiter(self, request: Any) -> Optional[Tuple[HttpLimiter, Outage]]:
        """The limiter deciding `request` (with its Redis warnings); None when it is not
        counted (another method, or a rate function returning None)."""
        if self.methods is not None and request.method not in self.methods:
            return None
        rate = self.rate(self.group, request) if callable(self.rate) else self.rate
        if rate is None:
            return None
        quota = quota_of(rate)
        found = self._limiters.get(quota)
        if found is None:
            with self._lock:
                found = self._limiters.get(quota)
                if found is None:
                    limiter = self._build(quota)
                    found = (limiter, Outage(limiter, sluicegate_settings().get(
                        "on_backend_failure")))
                    self._limiters[quota] = found
        return found

    def decide(self, request: Any) -> Optional[HttpVerdict]:
        """The library's verdict for `request` (None: not counted)."""
        found = self.limiter(request)
        if found is None:
            return None
        limiter, outage = found
        verdict = limiter.decide_wsgi(request.META, request)
        if limiter.remote:
            outage.check()
        return verdict

    async def adecide(self, request: Any) -> Optional[HttpVerdict]:
        """`decide` in an async view: limits on Redis never block the event loop."""
        found = self.limiter(request)
        if found is None:
            return None
        limiter, outage = found
        verdict = await adecide(limiter, request)
        if limiter.remote:
            outage.check()
        return verdict

    def _build(self, quota: str) -> HttpLimiter:
        options = sluicegate_settings()
        limit = {"name": _name(self.group, quota, self.methods), "key": self.key,
                 "quota": quota, "algorithm": self.algorithm or "gcra"}
        return build(
            [limit],
            trusted_proxies=options.get("trusted_proxies"),
            ipv6_prefix=options.get("ipv6_prefix", 64),
            forwarded_headers=options.get("forwarded_headers", "x-forwarded-for"),
            redis=options.get("redis"),
            redis_cluster=options.get("redis_cluster", False),
            on_backend_error=options.get("on_backend_error", "allow"),
            headers=options.get("headers", "standard"),
            body=_body(options),
            max_keys=options.get("max_keys"),
        )


_views: Dict[Tuple[Any, ...], ViewLimits] = {}
_views_lock = threading.Lock()


def _shared(group: str, key: Key, rate: Rate, methods: Optional[List[str]],
            algorithm: Optional[str]) -> ViewLimits:
    """The limiters of these arguments, one per process, as django-ratelimit's counts are
    one per group, rate and methods in its cache: `method_decorator` decorates the view
    again at every request, and two views may name one group."""
    index = (group, key, rate, tuple(methods or ()), algorithm)
    with _views_lock:
        found = _views.get(index)
        if found is None:
            found = ViewLimits(group, key, rate, methods, algorithm)
            _views[index] = found
        return found


def _body(options: Dict[str, Any]) -> str:
    body = options.get("body", "text")
    return body if isinstance(body, str) else "text"


def _limited(request: Any, verdict: Optional[HttpVerdict], block: bool) -> Optional[Any]:
    """What the wrapper answers instead of calling the view (None: call it), having set
    `request.limited` as django-ratelimit does."""
    refused = verdict is not None and not verdict.passes
    request.limited = refused or getattr(request, "limited", False)
    if not refused or not block:
        return None
    assert verdict is not None
    options = sluicegate_settings()
    if verdict.status == 429 and options.get("ratelimit_raise"):
        raise Ratelimited(verdict)
    return refusal(rewrite(verdict, options.get("body", "text"),
                           options.get("content_type", "text/plain; charset=utf-8"), request))


def _headers(response: Any, verdict: Optional[HttpVerdict]) -> Any:
    if verdict is None or not verdict.passes:
        return response
    return with_headers(response, verdict)


class RatelimitedView(Protocol[Params, Returned]):
    """A view `@ratelimit(...)` decorated: called as the view was, with its limit's
    `reset`."""

    limits: ViewLimits
    """The limiters of the decoration (one per quota its rate gives)."""

    def __call__(self, *args: Params.args, **kwargs: Params.kwargs) -> Returned: ...

    def reset(self, key: str) -> bool:
        """Forgets `key` in the limit (on Redis, for every process sharing it). Returns
        whether it held a state."""


def ratelimit(group: Optional[str] = None, key: Optional[Key] = None, rate: Rate = None,
              method: Union[str, Sequence[str], None] = ALL, block: bool = True, *,
              algorithm: Optional[str] = None
              ) -> Callable[[Callable[Params, Returned]], RatelimitedView[Params, Returned]]:
    """django-ratelimit's decorator, decided by the library: `@ratelimit(key="ip",
    rate="5/m", method="POST")` on a view (`method_decorator(ratelimit(...),
    name="post")` on a class-based view's method).

    `key`: `"ip"` (the client address through `SLUICEGATE["trusted_proxies"]` only),
    `"header:NAME"`, `"user"` (the user's pk; an anonymous request has no key: `400`),
    `"user_or_ip"`, `"get:NAME"`, `"post:NAME"`, a dotted path or a function `(group,
    request) -> str`. `rate`: `"5/m"`, `"100/h"`, `"5/10m"`, `(count, seconds)`, or a
    function `(group, request)` returning one (or None: not limited). `method`: a method,
    a list, `ALL` or `UNSAFE`; other methods are not counted. `block=True` answers the
    library's `429` (with `Retry-After` and the rate-limit headers; django-ratelimit raises
    `Ratelimited`, a `403`: set `SLUICEGATE["ratelimit_raise"] = True` for that);
    `block=False` sets `request.limited = True` and calls the view. `algorithm`: the
    library's (default `"gcra"`; django-ratelimit counts in fixed windows: `"fixed-window"`).
    A passing response gets the rate-limit headers. The decorated view's `reset(key)`
    forgets a key (`login.reset("192.0.2.1")` after a successful sign-in).
    """
    if key is None:
        raise ImproperlyConfigured("Ratelimit key must be specified")
    if rate is None:
        raise ImproperlyConfigured("ratelimit needs rate=, e.g. '5/m'")
    methods = _methods(method)

    def decorator(view: Callable[Params, Returned]) -> RatelimitedView[Params, Returned]:
        limits = _shared(group or _group_of(view), key, rate, methods, algorithm)

        if iscoroutinefunction(view):
            @functools.wraps(view)
            async def limited_async(request: Any, *args: Any, **kwargs: Any) -> Any:
                verdict = await limits.adecide(request)
                answer = _limited(request, verdict, block)
                if answer is not None:
                    return answer
                if verdict is not None and verdict.wait:
                    await asyncio.sleep(verdict.wait)
                return _headers(await view(request, *args, **kwargs), verdict)

            limited_async.limits = limits  # type: ignore[attr-defined]
            limited_async.reset = limits.reset  # type: ignore[attr-defined]
            return cast("RatelimitedView[Params, Returned]", limited_async)

        @functools.wraps(view)
        def limited(request: Any, *args: Any, **kwargs: Any) -> Any:
            verdict = limits.decide(request)
            answer = _limited(request, verdict, block)
            if answer is not None:
                return answer
            if verdict is not None and verdict.wait:
                time.sleep(verdict.wait)
            return _headers(view(request, *args, **kwargs), verdict)

        limited.limits = limits  # type: ignore[attr-defined]
        limited.reset = limits.reset  # type: ignore[attr-defined]
        return cast("RatelimitedView[Params, Returned]", limited)

    return decorator
