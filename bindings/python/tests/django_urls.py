"""The test Django project's views and URLs (`ROOT_URLCONF`): plain views behind the
middleware, views under `@ratelimit`, and DRF views under the library's throttles; and
`user_from_header`, a middleware standing in for authentication (the header `X-Test-User`
names a signed-in user's pk)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Callable, Optional

from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.utils.decorators import method_decorator
from django.views import View
from rest_framework.response import Response
from rest_framework.views import APIView

from sluicegate.django import UNSAFE, ratelimit
from sluicegate.drf import AnonRateThrottle, ScopedRateThrottle, UserRateThrottle


def user_from_header(get_response: Callable[[HttpRequest], Any]) -> Callable[[HttpRequest], Any]:
    def middleware(request: HttpRequest) -> Any:
        pk = request.headers.get("x-test-user")
        request.user = (SimpleNamespace(pk=int(pk), is_authenticated=True, is_active=True) if pk
                        else AnonymousUser())
        return get_response(request)
    return middleware


def hello(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok\n", content_type="text/plain")


async def hello_async(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok async\n", content_type="text/plain")


def too_many(request: HttpRequest) -> HttpResponse:
    """The app's own 429, with a RateLimit header of its own."""
    response = HttpResponse("inner\n", status=429)
    response["RateLimit"] = '"inner";r=0;t=9'
    response["Retry-After"] = "9"
    return response


@ratelimit(key="ip", rate="2/m", method="POST")
def login(request: HttpRequest) -> HttpResponse:
    return HttpResponse("signed in\n" if request.method == "POST" else "form\n")


@ratelimit(key="ip", rate="1/m", block=False)
def soft(request: HttpRequest) -> HttpResponse:
    return HttpResponse("limited\n" if getattr(request, "limited", False) else "free\n")


@ratelimit(key="user", rate="2/m")
def per_user(request: HttpRequest) -> HttpResponse:
    return HttpResponse("user\n")


@ratelimit(key="user_or_ip", rate="1/m")
def user_or_ip(request: HttpRequest) -> HttpResponse:
    return HttpResponse("user or ip\n")


@ratelimit(key="header:x-api-key", rate="3/10m")
def api_key(request: HttpRequest) -> HttpResponse:
    return HttpResponse("api\n")


def who(group: Optional[str], request: HttpRequest) -> Optional[str]:
    return request.GET.get("who")


def who_key(request: HttpRequest) -> Optional[str]:
    """A middleware key function named by a dotted path in the settings."""
    return request.GET.get("who")


def exempt_health(request: HttpRequest) -> bool:
    return "health" in request.GET


def rate_for(group: Optional[str], request: HttpRequest) -> Optional[str]:
    """Two a minute, one for `?tier=low`, unlimited for `?tier=none`."""
    return {"none": None, "low": "1/m"}.get(request.GET.get("tier", ""), "2/m")


@ratelimit(key=who, rate=rate_for, group="by-who")
def by_who(request: HttpRequest) -> HttpResponse:
    return HttpResponse("who\n")


@ratelimit(key="ip", rate="1/m", method=UNSAFE)
@ratelimit(key="ip", rate="3/m")
def stacked(request: HttpRequest) -> HttpResponse:
    return HttpResponse("stacked\n")


@ratelimit(key="ip", rate="1/m")
async def limited_async(request: HttpRequest) -> HttpResponse:
    return HttpResponse("async limited\n")


class Items(View):
    @method_decorator(ratelimit(key="ip", rate="1/m"))
    def get(self, request: HttpRequest) -> HttpResponse:
        return HttpResponse("items\n")


class AnonView(APIView):
    throttle_classes = [AnonRateThrottle]

    def get(self, request: Any) -> Response:
        return Response("anon")


class UserView(APIView):
    throttle_classes = [UserRateThrottle]

    def get(self, request: Any) -> Response:
        return Response("user")


class ScopedView(APIView):
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "uploads"

    def get(self, request: Any) -> Response:
        return Response("uploads")


urlpatterns = [
    path("", hello),
    path("async", hello_async),
    path("too-many", too_many),
    path("login", login),
    path("soft", soft),
    path("user", per_user),
    path("user-or-ip", user_or_ip),
    path("api-key", api_key),
    path("by-who", by_who),
    path("stacked", stacked),
    path("limited-async", limited_async),
    path("items", Items.as_view()),
    path("drf/anon", AnonView.as_view()),
    path("drf/user", UserView.as_view()),
    path("drf/scoped", ScopedView.as_view()),
]
