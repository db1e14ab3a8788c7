"""What a Django or DRF user writes with `sluicegate.django` and `sluicegate.drf`, for
`mypy --strict` (test_django_typing.py checks it). Django and DRF ship no types: their
objects are `Any` here, and the package's own names are typed."""

from __future__ import annotations

from typing import Any, Optional

from sluicegate.django import ALL, UNSAFE, Ratelimited, RateLimitMiddleware, ratelimit, reset
from sluicegate.drf import SluicegateRateThrottle, reset_throttles


@ratelimit(key="ip", rate="5/m", method="POST")
def login(request: Any) -> str:
    return "signed in"


@ratelimit(key=lambda group, request: request.GET.get("q"), rate=(10, 60), method=UNSAFE,
           block=False, algorithm="fixed-window")
def search(request: Any) -> str:
    return "limited" if request.limited else "free"


@ratelimit(key="user_or_ip", rate=lambda group, request: None, method=ALL)
async def feed(request: Any) -> str:
    return "feed"


class Tenant(SluicegateRateThrottle):
    rate = "100/day"
    algorithm = "gcra"

    def get_cache_key(self, request: Any, view: Any) -> Optional[str]:
        return None if request.user is None else f"tenant:{request.user.pk}"


def after_sign_in(address: str) -> bool:
    forgotten: bool = reset(address)
    reset_throttles()
    return forgotten


def refused(error: Ratelimited) -> int:
    return error.verdict.status


def build(get_response: Any) -> RateLimitMiddleware:
    return RateLimitMiddleware(get_response)


def after_login(address: str) -> bool:
    held: bool = login.reset(address)
    answer: str = login(object())
    return held and bool(answer)
