"""The middleware's options for a test server, from `SLUICEGATE_TEST_MIDDLEWARE` (JSON).

JSON cannot hold a function, so a limit's key `"function:NAME"` stands for a key function
that returns the request's header NAME, or None when it has none: the user's code a key
function would be (the middleware only calls it). Likewise a limit's quota
`"function:NAME"` stands for a quota function returning header NAME's value, or the first
of the limit's `quotas` when the request has none; and `"exempt_paths": [...]` for an
`exempt` function true on those paths.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, Optional

VARIABLE = "SLUICEGATE_TEST_MIDDLEWARE"


def asgi_header(name: str) -> Callable[[Dict[str, Any]], Optional[str]]:
    wanted = name.lower().encode("latin-1")

    def key(scope: Dict[str, Any]) -> Optional[str]:
        for header, value in scope["headers"]:
            if header == wanted:
                return str(value.decode("latin-1"))
        return None

    return key


def wsgi_header(name: str) -> Callable[[Dict[str, Any]], Optional[str]]:
    field = "HTTP_" + name.upper().replace("-", "_")

    def key(environ: Dict[str, Any]) -> Optional[str]:
        value = environ.get(field)
        return None if value is None else str(value)

    return key


def middleware_options(interface: str) -> Dict[str, Any]:
    """The options for `sluicegate.asgi` or `sluicegate.wsgi` (`interface`)."""
    options: Dict[str, Any] = json.loads(os.environ[VARIABLE])
    function = asgi_header if interface == "asgi" else wsgi_header
    for limit in options["limits"]:
        if limit["key"].startswith("function:"):
            limit["key"] = function(limit["key"][len("function:"):])
        if isinstance(limit.get("quota"), str) and limit["quota"].startswith("function:"):
            limit["quota"] = quota_function(function(limit["quota"][len("function:"):]),
                                            limit["quotas"][0])
    paths = options.pop("exempt_paths", None)
    if paths is not None:
        field = "path" if interface == "asgi" else "PATH_INFO"
        options["exempt"] = lambda request: request[field] in paths
    return options


def quota_function(header: Callable[[Dict[str, Any]], Optional[str]],
                   default: str) -> Callable[[Dict[str, Any]], str]:
    def quota(request: Dict[str, Any]) -> str:
        return header(request) or default

    return quota
