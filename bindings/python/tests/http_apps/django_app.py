"""A Django project behind `sluicegate.django.RateLimitMiddleware`, its `SLUICEGATE` from
`SLUICEGATE_TEST_MIDDLEWARE` (JSON, as the other apps'): `GET /` answers `ok`. `app` is
its ASGI application (uvicorn `http_apps.django_app:app`), `wsgi` its WSGI one (gunicorn
`http_apps.django_app:wsgi`)."""

from __future__ import annotations

import json
import os

import django
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import path

from http_apps.options import VARIABLE


def hello(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok\n", content_type="text/plain")


urlpatterns = [path("", hello)]

settings.configure(
    DEBUG=False,
    ALLOWED_HOSTS=["*"],
    SECRET_KEY="tests only",
    ROOT_URLCONF=__name__,
    MIDDLEWARE=["sluicegate.django.RateLimitMiddleware"],
    SLUICEGATE=json.loads(os.environ[VARIABLE]),
)
django.setup()

from django.core.asgi import get_asgi_application  # noqa: E402  (after the settings)
from django.core.wsgi import get_wsgi_application  # noqa: E402

app = get_asgi_application()
wsgi = get_wsgi_application()
