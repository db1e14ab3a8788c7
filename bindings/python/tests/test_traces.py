"""Every trace of the engine's trace file replayed through Limiter (keyed: false) and
KeyedLimiter (keyed: true) on a ManualClock: the same decisions, numbers and capacity errors
as the Rust engine, times equal within 1 ns."""

from __future__ import annotations

from typing import Any

import pytest
import traces

from sluicegate import KeyedLimiter, Limiter, ManualClock

TRACES = traces.load()


def test_the_file_holds_every_algorithm_keyed_and_direct_and_anchored_windows() -> None:
    kinds = {(trace["algorithm"], trace["keyed"]) for trace in TRACES}
    algorithms = {"gcra", "token-bucket", "leaky-bucket", "fixed-window", "sliding-window",
                  "sliding-log"}
    assert kinds == {(a, k) for a in algorithms for k in (True, False)}
    assert len(TRACES) == 54
    assert sum(trace["quota"].endswith(" anchored") for trace in TRACES) == 6


@pytest.mark.parametrize("trace", TRACES, ids=traces.trace_id)
def test_trace(trace: dict[str, Any]) -> None:
    clock = ManualClock()
    keyed = trace["keyed"]
    if keyed:
        limiter: Any = KeyedLimiter(trace["quota"], algorithm=trace["algorithm"], clock=clock)
    else:
        limiter = Limiter(trace["quota"], algorithm=trace["algorithm"], clock=clock)
    for number, step in enumerate(trace["steps"]):
        clock.set(step["at_us"] / 1e6)
        key = (step["key"],) if keyed else ()
        method = getattr(limiter, step["op"])
        where = f"step {number} ({step})"
        if "error" in step["expect"]:
            assert step["expect"]["error"] == "capacity"
            with pytest.raises(ValueError, match="can never be admitted"):
                method(*key, step["cost"])
            continue
        decision = method(*key, step["cost"])
        problem = traces.mismatch(decision, step["expect"], tolerance_ns=1)
        assert problem is None, f"{where}: {problem}"
