"""What `sluicegate.django` and `sluicegate.drf` read from Django's settings: the
`SLUICEGATE` dict (the options of the ASGI and WSGI middlewares), and the client address
as the library resolves it (its trusted-proxy rule), for DRF's `get_ident`.

Built objects are dropped when a test changes these settings (`override_settings`), so
each reads the settings in force."""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Mapping, Optional

from django.conf import settings  # type: ignore[import-untyped, unused-ignore]
from django.core.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    ImproperlyConfigured)
from django.core.signals import (  # type: ignore[import-untyped, unused-ignore]
    setting_changed)
from django.utils.module_loading import (  # type: ignore[import-untyped, unused-ignore]
    import_string)

from ._native import HttpLimiter

SETTING = "SLUICEGATE"

MIDDLEWARE_OPTIONS = frozenset({
    "limits", "trusted_proxies", "ipv6_prefix", "forwarded_headers", "redis",
    "redis_cluster", "on_backend_error", "exempt", "on_breach", "headers", "body",
    "content_type", "max_keys", "on_backend_failure",
})
"""The ASGI / WSGI middlewares' keyword arguments, read from `SLUICEGATE`."""

OTHER_OPTIONS = frozenset({"ratelimit_raise"})
"""`SLUICEGATE` keys read by `@ratelimit` only."""

CLIENT_OPTIONS = ("trusted_proxies", "ipv6_prefix", "forwarded_headers")
"""The options of the library's client-address rule."""

FUNCTION_OPTIONS = ("exempt", "on_breach", "on_backend_failure")
"""Options that may be given as a dotted path, imported when read."""


def sluicegate_settings() -> Dict[str, Any]:
    """`settings.SLUICEGATE` (a copy; `{}` when unset), its unknown keys refused and its
    function options given as dotted paths imported."""
    found = getattr(settings, SETTING, None)
    if found is None:
        return {}
    if not isinstance(found, Mapping):
        raise ImproperlyConfigured(f"settings.{SETTING} must be a dict, got "
                                   f"{type(found).__name__}")
    unknown = sorted(set(found) - MIDDLEWARE_OPTIONS - OTHER_OPTIONS)
    if unknown:
        raise ImproperlyConfigured(
            f"settings.{SETTING} has unknown option(s) {', '.join(map(repr, unknown))}; "
            f"the options are {', '.join(sorted(MIDDLEWARE_OPTIONS | OTHER_OPTIONS))}")
    options = dict(found)
    for name in FUNCTION_OPTIONS:
        if isinstance(options.get(name), str):
            options[name] = import_string(options[name])
    if "limits" in options:
        options["limits"] = [imported_key(limit) for limit in _listed(options["limits"])]
    return options


def _listed(limits: Any) -> List[Any]:
    if isinstance(limits, (str, bytes, Mapping)) or not hasattr(limits, "__iter__"):
        raise ImproperlyConfigured(f"settings.{SETTING}['limits'] must be a list of dicts, "
                                   f"got {type(limits).__name__}")
    return list(limits)


def imported_key(limit: Any) -> Any:
    """A limit whose `key` is a dotted path (`"myapp.limits.tenant"`: a str with a dot and no
    colon, which no key kind of the library is) with the function it names."""
    if isinstance(limit, Mapping):
        key = limit.get("key")
        if isinstance(key, str) and "." in key and ":" not in key:
            return {**limit, "key": import_string(key)}
    return limit


def middleware_options() -> Dict[str, Any]:
    """The middlewares' keyword arguments from `SLUICEGATE` (its `limits` required)."""
    options = sluicegate_settings()
    if "limits" not in options:
        raise ImproperlyConfigured(
            f"sluicegate.django.RateLimitMiddleware needs settings.{SETTING}['limits'], e.g. "
            "[{'name': 'ip', 'key': 'ip', 'quota': '10/second'}]")
    return {name: value for name, value in options.items() if name in MIDDLEWARE_OPTIONS}


def client_options() -> Dict[str, Any]:
    """The client-address rule's options from `SLUICEGATE`."""
    options = sluicegate_settings()
    return {name: options[name] for name in CLIENT_OPTIONS if name in options}


class Cached:
    """One object built from the settings, rebuilt after they change."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._built: Optional[Any] = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        built = self._built
        if built is None:
            with self._lock:
                if self._built is None:
                    self._built = self._make()
                built = self._built
        return built

    def clear(self) -> None:
        with self._lock:
            self._built = None


_caches: List[Callable[[], None]] = []
"""What to clear when a setting this package reads changes."""


def when_settings_change(clear: Callable[[], None]) -> None:
    _caches.append(clear)


def _changed(*, setting: str, **_: Any) -> None:
    if setting.startswith(SETTING) or setting == "REST_FRAMEWORK":
        for clear in _caches:
            clear()


setting_changed.connect(_changed, dispatch_uid="sluicegate-settings")


def _report(found: List[Optional[str]], client: Optional[str]) -> None:
    # A key function that keeps the client address and gives no key: the library then
    # refuses the probe with a 400 that is never sent, having counted nothing.
    found.append(client)
    return None


def _probe() -> HttpLimiter:
    return HttpLimiter([{"name": "client-address", "key": _report, "quota": "1/second"}],
                       headers=False, **client_options())


_client_probe = Cached(_probe)
when_settings_change(_client_probe.clear)


def client_address(meta: Mapping[str, Any]) -> Optional[str]:
    """The client's address from a request's `META` (a WSGI environ) as the library
    resolves it: `REMOTE_ADDR`, and the forwarding headers of `trusted_proxies` only
    (`"unix"` for a request without `REMOTE_ADDR`, as the library keys a Unix socket's)."""
    if "REQUEST_METHOD" not in meta:  # a bare HttpRequest() in a test
        meta = {**meta, "REQUEST_METHOD": "GET"}
    found: List[Optional[str]] = []
    _client_probe.get().decide_wsgi(meta, found)
    return found[0] if found else None
