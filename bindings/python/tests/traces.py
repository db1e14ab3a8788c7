"""The Rust engine's answers on fixed traces (tests/traces/decisions.json), and how to compare
a decision of this package with one of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

# bindings/python/tests/traces.py -> the repository root is three folders up.
TRACE_FILE = Path(__file__).resolve().parents[3] / "tests" / "traces" / "decisions.json"


def load() -> list[dict[str, Any]]:
    """Every trace of the file, as the engine wrote it."""
    with TRACE_FILE.open() as file:
        return json.load(file)["traces"]


def trace_id(trace: dict[str, Any]) -> str:
    keyed = "keyed" if trace["keyed"] else "direct"
    return f"{trace['algorithm']}-{keyed}-{trace['quota'].replace(' ', '_')}"


def close(seconds: Optional[float], nanos: Optional[int], tolerance_ns: float) -> bool:
    """Seconds (ours) equal to nanoseconds (Rust's) within `tolerance_ns`."""
    if seconds is None or nanos is None:
        return seconds is None and nanos is None
    return abs(seconds * 1e9 - nanos) <= tolerance_ns


def mismatch(decision: Any, expect: dict[str, Any], tolerance_ns: float) -> Optional[str]:
    """None when `decision` says what Rust said, else what differs."""
    problems = []
    for name in ("allowed", "limit", "remaining"):
        if getattr(decision, name) != expect[name]:
            problems.append(f"{name} {getattr(decision, name)!r} != {expect[name]!r}")
    for name in ("retry_after", "reset_after", "wait"):
        ours, rust = getattr(decision, name), expect[f"{name}_ns"]
        if not close(ours, rust, tolerance_ns):
            problems.append(f"{name} {ours!r} s != {rust!r} ns")
    return "; ".join(problems) or None
