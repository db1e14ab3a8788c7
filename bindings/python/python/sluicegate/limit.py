"""`Limit`: the type of one entry of the middlewares' `limits` (for type checkers; at run
time a plain dict)."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, TypedDict, Union

__all__ = ["KeyFunction", "Limit", "QuotaFunction"]

KeyFunction = Callable[..., Optional[str]]
"""A key computed from the request (the ASGI scope, or the WSGI environ), and, when it takes
a second argument, the client's address as the trusted-proxy rules resolved it (a str, or
None): a str, or None when the request has none (it is then refused with 400)."""

QuotaFunction = Callable[[Any], str]
"""A quota chosen per request (from the ASGI scope, or the WSGI environ): one of the limit's
`quotas`."""


class _Required(TypedDict):
    name: str
    """1 to 64 characters: it names the limit in the headers, and on Redis."""
    key: Union[str, KeyFunction]
    """`"ip"`, `"global"`, `"header:NAME"`, or a function of the request."""
    quota: Union[str, QuotaFunction]
    """A quota string: `"5/second"`, `"100/minute burst 20"`, or several decided
    all-or-nothing (`"5/minute; 100/hour"`, named `NAME-1`, `NAME-2`... in the headers and on
    Redis); or a function of the request returning one of `quotas`."""


class Limit(_Required, total=False):
    """One limit: `{"name": "ip", "key": "ip", "quota": "5/second"}`, optionally with
    `"algorithm"` (default `"gcra"`), `"cost"` (what each request costs, default 1) and,
    with a quota function, `"quotas"`: the quota strings it may return (its tiers, each
    with its own tables, built up front)."""

    algorithm: str
    cost: int
    quotas: Sequence[str]
