"""The package README's first example runs as written."""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_first_example_runs() -> None:
    text = README.read_text()
    section = text[text.index("## A first example"):]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.group(1), str(README), "exec"), {})
    assert printed.getvalue() == "go ahead; 99 more allowed now\n"


def test_the_fastapi_middleware_example_answers_a_plain_request(redis_server: Any,
                                                                tmp_path: Path) -> None:
    """The README's FastAPI example under uvicorn, on our own redis-server: a request with
    no header at all passes (no 400), and /health is exempt."""
    from http_servers import BIN, Server, get
    from conftest import free_port

    text = README.read_text()
    section = text[text.index("## Middleware"):]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None and "FastAPI()" in code.group(1)
    source = code.group(1).replace("redis://127.0.0.1:6379/", redis_server.url)
    (tmp_path / "readme_app.py").write_text(source)
    port = free_port()
    with Server([str(BIN / "uvicorn"), "readme_app:app", "--app-dir", str(tmp_path),
                 "--host", "127.0.0.1", "--port", str(port), "--no-proxy-headers",
                 "--log-level", "warning"], port) as server:
        answer = get(server.port)
        assert answer.status == 200, answer.body
        assert answer.header("RateLimit-Policy") == (
            '"ip";q=10;w=1, "tenant";q=1000;w=60')
        tenant = get(server.port, headers={"X-Tenant": "acme"})
        assert tenant.status == 200
        health = get(server.port, "/health")
        assert health.status == 200 and health.header("RateLimit") is None
