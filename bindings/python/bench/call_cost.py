"""What one check costs from Python, taken apart: ns per call of an empty Python function,
of the cheapest call into the module (`len`), of Limiter.check and KeyedLimiter.check (1,000
keys), and of reading a decision's numbers. Medians over rounds, alternated.

    python bindings/python/bench/call_cost.py [--rounds 7] [--calls 300000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Callable

import sluicegate

KEYS = [f"user:{n}" for n in range(1_000)]


def ns_per_call(call: Callable[[str], object], sequence: list[str]) -> float:
    start = time.perf_counter()
    for key in sequence:
        call(key)
    return (time.perf_counter() - start) / len(sequence) * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300_000)
    arguments = parser.parse_args()
    keyed = sluicegate.KeyedLimiter("100/minute")
    one = sluicegate.Limiter("100/minute")

    def empty(key: str) -> None:
        return None

    def numbers(key: str) -> object:
        d = keyed.check(key)
        return d.allowed, d.remaining, d.retry_after, d.reset_after

    cases: dict[str, Callable[[str], object]] = {
        "an empty Python function f(key)": empty,
        "len(keyed): the cheapest call into the module": lambda key: len(keyed),
        "Limiter.check()": lambda key: one.check(),
        "KeyedLimiter.check(key)": keyed.check,
        "KeyedLimiter.check(key) and 4 numbers read": numbers,
    }
    rng = random.Random(7)
    sequence = [rng.choice(KEYS) for _ in range(arguments.calls)]
    timings: dict[str, list[float]] = {name: [] for name in cases}
    for round_number in range(arguments.rounds + 1):
        for name, call in cases.items():
            ns = ns_per_call(call, sequence)
            if round_number > 0:
                timings[name].append(ns)
    print(f"ns per call, {arguments.calls:,} calls, {arguments.rounds} rounds (median; min-max):")
    print("| call | ns |")
    print("|---|--:|")
    for name, values in timings.items():
        print(f"| {name} | {statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f}) |")


if __name__ == "__main__":
    main()
