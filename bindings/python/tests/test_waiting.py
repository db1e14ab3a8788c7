"""Waiting for a slot: `await limiter.acquire(key)`, `async with limiter.acquire(key):` and
the blocking `wait(key)` on KeyedLimiter, Limiter and RedisLimiter (a real redis-server):
exact waits from the engine's retry_after, first come first served per key, and a
cancelled or timed-out wait consumes nothing."""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from typing import List

from conftest import RedisServer
from sluicegate import KeyedLimiter, Limiter, RedisLimiter, _queues

# Waits are real time (they sleep the engine's retry_after), so their bounds are wall-clock.
# Each lower bound is what the quota allows at the fastest; each upper bound sits about
# halfway to the nearest wrong answer, a wait of the quota's whole period per slot (1 s), so
# that a loaded two-core machine keeps it.


def test_acquire_waits_exactly_the_engines_retry_after() -> None:
    limiter = KeyedLimiter("10/second burst 1")

    async def main() -> float:
        start = time.monotonic()
        for _ in range(3):
            decision = await limiter.acquire("k")
            assert decision.allowed
        return time.monotonic() - start

    elapsed = asyncio.run(main())
    assert 0.19 <= elapsed < 1.0, elapsed
    assert not limiter.peek("k").allowed, "the third slot was consumed"


def test_acquire_serves_one_key_first_come_first_served() -> None:
    limiter = KeyedLimiter("50/second burst 1")
    done: List[int] = []

    async def one(i: int) -> None:
        async with limiter.acquire("k") as decision:
            assert decision.allowed
            done.append(i)

    async def main() -> None:
        tasks = []
        for i in range(8):
            tasks.append(asyncio.create_task(one(i)))
            await asyncio.sleep(0)  # each task queues before the next starts
        # Another key is not held up behind them (behind them: 8 x 20 ms).
        start = time.monotonic()
        await limiter.acquire("other")
        assert time.monotonic() - start < 0.08
        await asyncio.gather(*tasks)

    asyncio.run(main())
    assert done == list(range(8))


def test_a_cancelled_acquire_consumes_nothing() -> None:
    limiter = KeyedLimiter("1/second burst 1")

    async def main() -> None:
        await limiter.acquire("k")
        waiting = asyncio.create_task(limiter.acquire("k").__aenter__())
        # Cancelled once it waits in the key's queue (not before it started, which would
        # consume nothing whatever the code did).
        while not _queues(limiter).async_locks:
            await asyncio.sleep(0)
        await asyncio.sleep(0.01)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        assert waiting.cancelled()

    asyncio.run(main())
    retry = limiter.peek("k").retry_after
    assert retry is not None and retry < 1.0, "one slot consumed, not two"


def test_limiter_acquire_and_blocking_wait() -> None:
    one = Limiter("20/second burst 1")

    async def main() -> None:
        await one.acquire()
        await one.acquire()

    start = time.monotonic()
    asyncio.run(main())
    assert 0.04 <= time.monotonic() - start < 0.5
    keyed = KeyedLimiter("20/second burst 1")
    # Each thread starts once the one before stands in the key's queue, so the order they
    # arrive in is made here, not left to the scheduler.
    arrived = threading.Semaphore(0)

    class Queue(collections.deque):  # type: ignore[type-arg]
        def append(self, ticket: object) -> None:
            super().append(ticket)
            arrived.release()

    class Tickets(dict):  # type: ignore[type-arg]
        def setdefault(self, key: object, default: object = None) -> Queue:
            return super().setdefault(key, Queue())  # type: ignore[no-any-return]

    _queues(keyed).tickets = Tickets()
    start = time.monotonic()
    order: List[int] = []

    def worker(i: int) -> None:
        decision = keyed.wait("k")
        assert decision is not None and decision.allowed
        order.append(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
        assert arrived.acquire(timeout=10), "a waiter never queued"
    for thread in threads:
        thread.join()
    assert order == [0, 1, 2, 3]
    assert 0.14 <= time.monotonic() - start < 1.5
    # A wait that would end after its timeout returns None at once, consuming nothing.
    before = keyed.peek("k").retry_after
    assert keyed.wait("k", timeout=0.001) is None
    after = keyed.peek("k").retry_after
    assert before is not None and after is not None and after <= before
    assert one.wait(timeout=1.0) is not None


def test_redis_limiter_acquire_and_wait(redis_server: RedisServer, prefix: str) -> None:
    with RedisLimiter("10/second burst 1", url=redis_server.url, prefix=prefix) as limiter:
        async def main() -> float:
            start = time.monotonic()
            for _ in range(3):
                assert (await limiter.acquire("k")).allowed
            return time.monotonic() - start

        assert 0.19 <= asyncio.run(main()) < 1.0
        start = time.monotonic()
        decision = limiter.wait("k")
        assert decision is not None and decision.allowed
        assert 0.05 <= time.monotonic() - start < 0.5
