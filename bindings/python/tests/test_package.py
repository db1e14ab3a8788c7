"""The installed package: the compiled module, py.typed and stubs that match the module
(mypy's stubtest), and a type checker that reads them."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from importlib import resources
from pathlib import Path

import pytest

import sluicegate
from sluicegate import _native


def test_the_compiled_module_is_the_installed_one() -> None:
    assert Path(_native.__file__).name.startswith("_native.")
    assert Path(_native.__file__).suffix == ".so"
    assert Path(sluicegate.__file__).parent == Path(_native.__file__).parent


def test_the_package_ships_py_typed_and_stubs() -> None:
    files = resources.files("sluicegate")
    assert files.joinpath("py.typed").is_file()
    assert files.joinpath("_native.pyi").is_file()


def test_the_version_is_the_installed_distributions() -> None:
    from importlib.metadata import version

    assert sluicegate.__version__ == version("sluicegate")
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", sluicegate.__version__)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        sluicegate.nope  # type: ignore[attr-defined]  # noqa: B018


def test_dir_lists_the_public_names_only() -> None:
    assert dir(sluicegate) == sorted([*sluicegate.__all__, "__version__"])
    assert "Optional" not in dir(sluicegate) and "annotations" not in dir(sluicegate)
    for name in sluicegate.__all__:
        assert getattr(sluicegate, name) is not None


def mypy(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.fail("mypy is not installed: pip install mypy (the stubs' tests need it)",
                    pytrace=False)
    # Run in a temporary folder: mypy leaves its cache where it runs.
    return subprocess.run([sys.executable, "-m", *arguments], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_the_stubs_match_the_compiled_module(tmp_path: Path) -> None:
    result = mypy("mypy.stubtest", "sluicegate._native", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_type_checker_reads_the_stubs(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    good.write_text(textwrap.dedent("""
        from typing import Optional
        import asyncio
        from sluicegate import KeyedLimiter, Limiter, ManualClock, RedisError, RedisLimiter

        clock = ManualClock()
        per_user = KeyedLimiter("100/minute burst 20", algorithm="sliding-window", clock=clock)
        allowed: bool = per_user.check("user:42", cost=3).allowed
        retry: Optional[float] = per_user.peek("user:42").retry_after
        held: int = len(per_user)
        clock.advance(0.25)
        wait: float = Limiter("1000/second").hit(2).wait

        async def shared(url: str) -> bool:
            async with RedisLimiter("5/second", url=url, algorithm="gcra") as limiter:
                first = await limiter.acheck("user:42", cost=2)
                return first.allowed and bool(limiter.check("user:42"))

        kind: str = RedisError("down").kind
        asyncio.run(shared("redis://127.0.0.1:6379/"))

        from typing import Any, Awaitable, Callable, Dict, Iterable, MutableMapping
        from sluicegate import HttpLimiter, Limit
        from sluicegate.asgi import RateLimitMiddleware as Asgi
        from sluicegate.wsgi import RateLimitMiddleware as Wsgi

        async def asgi_app(scope: MutableMapping[str, Any],
                           receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
                           send: Callable[[MutableMapping[str, Any]], Awaitable[None]]) -> None:
            pass

        def wsgi_app(environ: Dict[str, Any], start: Callable[..., Any]) -> Iterable[bytes]:
            return [b"ok"]

        def user(request: MutableMapping[str, Any]) -> Optional[str]:
            return None

        limits: list[Limit] = [{"name": "ip", "key": "ip", "quota": "5/second"},
                               {"name": "user", "key": user, "quota": "10/second", "cost": 2}]
        asgi = Asgi(asgi_app, limits=limits, trusted_proxies=["10.0.0.0/8"], ipv6_prefix=64,
                    redis=None, on_backend_error="allow")
        wsgi = Wsgi(wsgi_app, limits=limits)
        verdict = HttpLimiter(limits).decide_wsgi({"REQUEST_METHOD": "GET"})
        status: int = verdict.status
        headers: list[tuple[str, str]] = verdict.wsgi_headers([("Content-Type", "text/plain")])
    """))
    bad = tmp_path / "bad.py"
    bad.write_text(textwrap.dedent("""
        from sluicegate import KeyedLimiter
        KeyedLimiter("5/second").check(42)
    """))
    checked = mypy("mypy", "--strict", "--no-incremental", str(good), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    refused = mypy("mypy", "--strict", "--no-incremental", str(bad), cwd=tmp_path)
    assert refused.returncode == 1
    assert 'Argument 1 to "check" of "KeyedLimiter" has incompatible type "int"' in refused.stdout


def test_a_typed_example_of_the_new_options_passes_mypy_strict(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parent / "typed_example.py"
    checked = mypy("mypy", "--strict", "--no-incremental", str(example), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
