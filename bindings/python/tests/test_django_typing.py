"""`sluicegate.django` and `sluicegate.drf` are typed: a user's code using them passes
`mypy --strict` (Django and DRF, which ship no types, read as `Any`), and a wrong argument
is caught."""

from __future__ import annotations

from pathlib import Path

from test_package import mypy

EXAMPLE = Path(__file__).resolve().parent / "typed_django_example.py"


def test_a_typed_django_and_drf_example_passes_mypy_strict(tmp_path: Path) -> None:
    checked = mypy("mypy", "--strict", "--no-incremental", str(EXAMPLE), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_wrong_argument_is_caught(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from sluicegate.django import ratelimit\n"
                   "ratelimit(key='ip', rate='5/m', block='yes')\n"
                   "@ratelimit(key='ip', rate='5/m')\n"
                   "def view(request: object) -> str: return ''\n"
                   "view.reset(42)\n")
    refused = mypy("mypy", "--strict", "--no-incremental", str(bad), cwd=tmp_path)
    assert refused.returncode == 1
    assert 'Argument "block" to "ratelimit" has incompatible type "str"' in refused.stdout
    assert 'Argument 1 to "reset" of "RatelimitedView" has incompatible type "int"' in \
        refused.stdout
