"""KeyedLimiter.check against `limits` (fixed window and moving window, memory storage) and
the tutorials' token bucket, in one process: calls per second over 1,000 and 1,000,000
random keys, contenders alternated in every round, medians over the rounds; beside them the
floor a Python caller pays for any keyed lookup: `dict.get` on a dict of the same keys, in
the same loop over the same key sequence.

    python bindings/python/bench/keyed.py [--rounds 5] [--calls 100000] [--keys 1000 1000000]
        [--lengths 8 15 36 40]

Keys are random letters and digits of 8, 15, 36 and 40 characters (`--lengths`). Every
contender decides the same quota on the same random key sequence. First each sees
every key once, in a random order (timed: the cost of a key's first call, which inserts
it); then each round times `--calls` calls on keys drawn at random from the whole set (the
steady state of a server whose clients are known). `limits`' memory storage expires keys
from a timer thread that scans every key; it is joined after each of its turns so that its
scan is charged to `limits`, not to the contender that runs next.

Prints Markdown tables, and for each key count a `headline:` line (sluicegate against the
`dict.get` floor) that scripts/bench_report.py reads.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time
from typing import Any, Callable

import limits
from limits import storage, strategies
from tutorial_bucket import TokenBucket

import sluicegate

QUOTA = "100/minute"
OURS = "sluicegate KeyedLimiter.check"
FIXED = "limits fixed window (memory)"
FLOOR = "floor: dict.get of the same keys"


class Contender:
    def __init__(self, name: str, decide: Callable[[str], object], store: Any = None) -> None:
        self.name, self.decide, self.store = name, decide, store

    def calls_per_second(self, sequence: list[str]) -> float:
        decide = self.decide
        start = time.perf_counter()
        for key in sequence:
            decide(key)
        rate = len(sequence) / (time.perf_counter() - start)
        if self.store is not None:
            self.store.timer.join()  # let limits' expiry scan finish on limits' time
        return rate


def contenders() -> list[Contender]:
    item = limits.parse(QUOTA)
    fixed_store, moving_store = storage.MemoryStorage(), storage.MemoryStorage()
    fixed = strategies.FixedWindowRateLimiter(fixed_store)
    moving = strategies.MovingWindowRateLimiter(moving_store)
    bucket = TokenBucket(100 / 60, 100)
    return [
        Contender(OURS, sluicegate.KeyedLimiter(QUOTA).check),
        Contender(FIXED, lambda key: fixed.hit(item, key), fixed_store),
        Contender("limits moving window (memory)", lambda key: moving.hit(item, key),
                  moving_store),
        Contender("tutorial token bucket (dict + Lock)", bucket.allow),
    ]


def table(title: str, rates: dict[str, list[float]]) -> None:
    print(f"\n{title}\n")
    print("| contender | calls/s | ns/call | sluicegate against it |")
    print("|---|--:|--:|--:|")
    ours = statistics.median(rates[OURS])
    for name, values in rates.items():
        median = statistics.median(values)
        spread = f" ({min(values):,.0f}-{max(values):,.0f})" if len(values) > 1 else ""
        if name == OURS:
            times = ""
        elif name == FLOOR:
            times = f"{median / ours:.2f}x the time"
        else:
            times = f"{ours / median:.1f}x faster"
        print(f"| {name} | {median:,.0f}{spread} | {1e9 / median:,.0f} | {times} |")


ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def random_keys(rng: random.Random, count: int, length: int) -> list[str]:
    """`count` distinct keys of `length` random letters and digits (an API key, a token)."""
    keys: set[str] = set()
    while len(keys) < count:
        keys.add("".join(rng.choices(ALPHABET, k=length)))
    return sorted(keys)


def run(key_count: int, rounds: int, calls: int, length: int) -> None:
    rng = random.Random(key_count * 100 + length)
    keys = random_keys(rng, key_count, length)
    print(f"\n**{key_count:,} random keys of {length} characters**")
    players = contenders()
    first_sight = rng.sample(keys, len(keys))
    inserted = {p.name: [p.calls_per_second(first_sight)] for p in players}
    players.append(Contender(FLOOR, dict.fromkeys(keys, 1).get))
    rates: dict[str, list[float]] = {p.name: [] for p in players}
    ratios: list[float] = []
    floor_ratios: list[float] = []
    for round_number in range(rounds):
        sequence = [keys[rng.randrange(key_count)] for _ in range(calls)]
        order = players if round_number % 2 == 0 else players[::-1]
        measured = {p.name: p.calls_per_second(sequence) for p in order}
        for name, rate in measured.items():
            rates[name].append(rate)
        ratios.append(measured[OURS] / measured[FIXED])
        floor_ratios.append(measured[FLOOR] / measured[OURS])
    if key_count >= 100_000:
        table(f"{key_count:,} keys, each key's first call (inserting it), {QUOTA!r}:", inserted)
    table(f"{key_count:,} keys present, {calls:,} calls on random keys per contender per "
          f"round, {rounds} rounds (median; min-max), {QUOTA!r}:", rates)
    print(f"\nPer-round ratios: sluicegate against limits' fixed window, median "
          f"{statistics.median(ratios):.1f}x faster (rounds: {', '.join(f'{r:.1f}' for r in ratios)}); "
          f"sluicegate against the dict.get floor, median {statistics.median(floor_ratios):.2f}x "
          f"the time (rounds: {', '.join(f'{r:.2f}' for r in floor_ratios)}).")
    floor_ns = 1e9 / statistics.median(rates[FLOOR])
    print(f"headline: python-keyed-{key_count}-{length}: {statistics.median(floor_ratios):.2f}x the "
          f"floor ({1e9 / statistics.median(rates[OURS]):,.0f} ns a call); "
          f"{statistics.median(ratios):.0f}x faster than limits' fixed window | "
          f"dict.get {floor_ns:,.0f} ns")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--keys", type=int, nargs="+", default=[1_000, 1_000_000])
    parser.add_argument("--lengths", type=int, nargs="+", default=[8, 15, 36, 40])
    arguments = parser.parse_args()
    print(f"Python {platform.python_version()}, limits {limits.__version__}, "
          f"sluicegate {sluicegate.__name__} ({platform.machine()}, {platform.platform()})")
    for length in arguments.lengths:
        for key_count in arguments.keys:
            run(key_count, arguments.rounds, arguments.calls, length)


if __name__ == "__main__":
    main()
