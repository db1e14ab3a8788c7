"""KeyedLimiter.check against `limits` (fixed window and moving window, memory storage) and
the tutorials' token bucket, in one process: calls per second over 1,000 and 1,000,000
random keys, contenders alternated in every round, medians over the rounds.

    python bindings/python/bench/keyed.py [--rounds 5] [--calls 100000]

Every contender decides the same quota on the same random key sequence each round; each
keeps its state across rounds (one warm-up round first, not counted).
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time
from typing import Callable

import limits
from limits import storage, strategies
from tutorial_bucket import TokenBucket

import sluicegate

QUOTA = "100/minute"


def contenders() -> dict[str, Callable[[str], object]]:
    item = limits.parse(QUOTA)
    fixed = strategies.FixedWindowRateLimiter(storage.MemoryStorage())
    moving = strategies.MovingWindowRateLimiter(storage.MemoryStorage())
    keyed = sluicegate.KeyedLimiter(QUOTA)
    bucket = TokenBucket(100 / 60, 100)
    return {
        "sluicegate KeyedLimiter.check": keyed.check,
        "limits fixed window (memory)": lambda key: fixed.hit(item, key),
        "limits moving window (memory)": lambda key: moving.hit(item, key),
        "tutorial token bucket (dict + Lock)": bucket.allow,
    }


def calls_per_second(decide: Callable[[str], object], sequence: list[str]) -> float:
    start = time.perf_counter()
    for key in sequence:
        decide(key)
    return len(sequence) / (time.perf_counter() - start)


def run(key_count: int, rounds: int, calls: int) -> None:
    rng = random.Random(key_count)
    keys = [f"user:{rng.getrandbits(64):016x}" for _ in range(key_count)]
    limiters = contenders()
    rates: dict[str, list[float]] = {name: [] for name in limiters}
    ratios: list[float] = []
    for round_number in range(rounds + 1):
        sequence = [keys[rng.randrange(key_count)] for _ in range(calls)]
        measured = {name: calls_per_second(decide, sequence) for name, decide in limiters.items()}
        if round_number == 0:
            continue  # warm-up: first inserts, caches, allocator
        for name, rate in measured.items():
            rates[name].append(rate)
        ratios.append(measured["sluicegate KeyedLimiter.check"]
                      / measured["limits fixed window (memory)"])
    print(f"\n{key_count:,} random keys, quota {QUOTA!r}, {calls:,} calls per contender per "
          f"round, {rounds} rounds (median; min-max):")
    print("| contender | calls/s | ns/call | sluicegate is |")
    print("|---|--:|--:|--:|")
    ours = statistics.median(rates["sluicegate KeyedLimiter.check"])
    for name, values in rates.items():
        median = statistics.median(values)
        times = "" if name.startswith("sluicegate") else f"{ours / median:.1f}x faster"
        print(f"| {name} | {median:,.0f} ({min(values):,.0f}-{max(values):,.0f}) | "
              f"{1e9 / median:,.0f} | {times} |")
    print(f"per-round ratio sluicegate / limits fixed window: median {statistics.median(ratios):.1f}x"
          f" (rounds: {', '.join(f'{r:.1f}' for r in ratios)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--keys", type=int, nargs="+", default=[1_000, 1_000_000])
    arguments = parser.parse_args()
    print(f"Python {platform.python_version()}, limits {limits.__version__}, "
          f"{platform.machine()}, {platform.processor() or platform.platform()}")
    for key_count in arguments.keys:
        run(key_count, arguments.rounds, arguments.calls)


if __name__ == "__main__":
    main()
