"""What one check costs from Python, taken apart: ns per iteration of a loop that calls an
empty Python function, the cheapest call into the module (`len`), Limiter.check(),
KeyedLimiter.check(key) over 1,000 keys, and the same reading four numbers of each
decision. Each is its own loop (no wrapper call), alternated, medians over rounds.

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


def empty(key: str) -> None:
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300_000)
    arguments = parser.parse_args()
    keyed = sluicegate.KeyedLimiter("100/minute")
    one = sluicegate.Limiter("100/minute")

    def call_empty(sequence: list[str]) -> None:
        for key in sequence:
            empty(key)

    def call_len(sequence: list[str]) -> None:
        for _ in sequence:
            len(keyed)

    def direct_check(sequence: list[str]) -> None:
        check = one.check
        for _ in sequence:
            check()

    def keyed_check(sequence: list[str]) -> None:
        check = keyed.check
        for key in sequence:
            check(key)

    def keyed_check_numbers(sequence: list[str]) -> None:
        check = keyed.check
        for key in sequence:
            d = check(key)
            d.allowed, d.remaining, d.retry_after, d.reset_after

    cases: dict[str, Callable[[list[str]], None]] = {
        "empty Python function `f(key)`": call_empty,
        "`len(keyed)`: the cheapest call into the module": call_len,
        "`Limiter.check()`": direct_check,
        "`KeyedLimiter.check(key)`, 1,000 keys": keyed_check,
        "the same, reading `allowed`, `remaining`, `retry_after`, `reset_after`":
            keyed_check_numbers,
    }
    rng = random.Random(7)
    sequence = [rng.choice(KEYS) for _ in range(arguments.calls)]
    timings: dict[str, list[float]] = {name: [] for name in cases}
    for round_number in range(arguments.rounds + 1):
        for name, loop in cases.items():
            start = time.perf_counter()
            loop(sequence)
            ns = (time.perf_counter() - start) / len(sequence) * 1e9
            if round_number > 0:  # round 0 warms up
                timings[name].append(ns)
    print(f"ns per loop iteration, {arguments.calls:,} iterations, {arguments.rounds} rounds "
          f"(median; min-max):")
    print("| loop body | ns |")
    print("|---|--:|")
    for name, values in timings.items():
        print(f"| {name} | {statistics.median(values):,.0f} "
              f"({min(values):,.0f}-{max(values):,.0f}) |")


if __name__ == "__main__":
    main()
