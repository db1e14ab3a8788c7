"""Four threads checking one KeyedLimiter against one thread: calls per second in total, with
the GIL held during each check (the default) and released, alternated, medians over rounds.

    python bindings/python/bench/threads.py [--rounds 5] [--calls 200000]

Each thread checks its own random sequence over the same 1,000 keys; a round times 1 thread
and 4 threads in each GIL mode, in turn.
"""

from __future__ import annotations

import argparse
import random
import statistics
import threading
import time

import sluicegate
from sluicegate import _native

QUOTA = "100/minute"
KEYS = [f"user:{n}" for n in range(1_000)]


def calls_per_second(limiter: sluicegate.KeyedLimiter, threads: int, calls: int) -> float:
    """Total checks per second of `threads` threads doing `calls` checks each."""
    rng = random.Random(threads)
    sequences = [[rng.choice(KEYS) for _ in range(calls)] for _ in range(threads)]
    start_line = threading.Barrier(threads + 1)

    def work(sequence: list[str]) -> None:
        check = limiter.check
        start_line.wait()
        for key in sequence:
            check(key)

    workers = [threading.Thread(target=work, args=(s,)) for s in sequences]
    for worker in workers:
        worker.start()
    start_line.wait()
    start = time.perf_counter()
    for worker in workers:
        worker.join()
    return threads * calls / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200_000)
    arguments = parser.parse_args()
    limiter = sluicegate.KeyedLimiter(QUOTA)
    cases = [(release, threads) for release in (False, True) for threads in (1, 4)]
    rates: dict[tuple[bool, int], list[float]] = {case: [] for case in cases}
    before = _native._release_gil_during_checks(False)
    try:
        for round_number in range(arguments.rounds + 1):
            for release, threads in cases:
                _native._release_gil_during_checks(release)
                rate = calls_per_second(limiter, threads, arguments.calls)
                if round_number > 0:  # round 0 warms up
                    rates[(release, threads)].append(rate)
    finally:
        _native._release_gil_during_checks(before)
    print(f"One KeyedLimiter({QUOTA!r}), 1,000 random keys, {arguments.calls:,} checks per "
          f"thread, {arguments.rounds} rounds (median; min-max):")
    print("| GIL during a check | threads | checks/s in total | against 1 thread, GIL held |")
    print("|---|--:|--:|--:|")
    baseline = statistics.median(rates[(False, 1)])
    for (release, threads), values in rates.items():
        median = statistics.median(values)
        mode = "released" if release else "held (default)"
        print(f"| {mode} | {threads} | {median:,.0f} ({min(values):,.0f}-{max(values):,.0f}) | "
              f"{median / baseline:.2f}x |")


if __name__ == "__main__":
    main()
