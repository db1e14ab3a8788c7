"""The package README's first example runs as written."""

from __future__ import annotations

import contextlib
import io
import re
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
