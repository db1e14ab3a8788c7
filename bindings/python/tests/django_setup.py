"""Django for the tests that run it in this process (test_django*.py, test_drf*.py): its
settings configured once (a SQLite database in memory, migrated, for DRF's users), the
project's URLs in `django_urls`. Each test gives its own `SLUICEGATE` and `MIDDLEWARE` with
`override_settings`, so the middleware (built by each test `Client` at its first request)
reads that test's."""

from __future__ import annotations

import django
from django.conf import settings

BASE = {
    "DEBUG": False,
    "ALLOWED_HOSTS": ["*"],
    "SECRET_KEY": "tests only",
    "ROOT_URLCONF": "django_urls",
    "INSTALLED_APPS": ["django.contrib.contenttypes", "django.contrib.auth",
                       "rest_framework"],
    "DATABASES": {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
    "DEFAULT_AUTO_FIELD": "django.db.models.AutoField",
    "MIDDLEWARE": [],
    "USE_TZ": True,
}


def configure() -> None:
    """Configures Django once per process (later calls do nothing)."""
    if settings.configured:
        return
    settings.configure(**BASE)
    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment
    setup_test_environment()
    call_command("migrate", run_syncdb=True, verbosity=0)


configure()
