"""Waiting for a slot instead of being refused (aiolimiter's `async with limiter:`,
pyrate-limiter's blocking delay): `acquire` (asyncio) and `wait` (blocking) on the
limiters. Each asks the engine, and when denied sleeps exactly the engine's `retry_after`
and asks again; callers of one key are served first come, first served (one asks the
engine at a time, in arrival order). A denial consumes nothing, so a wait cancelled or
timed out consumes nothing."""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from types import TracebackType
from typing import (Any, Awaitable, Callable, Deque, Dict, Generator, Hashable, Optional,
                    Tuple, Type)

from ._native import Decision

Check = Callable[[], Decision]
ACheck = Callable[[], Awaitable[Decision]]


class _Queues:
    """One FIFO queue of waiters per key: asyncio locks (which wake waiters in the order
    they came) per event loop, and tickets under a condition for threads. A key's entry is
    dropped when its last waiter leaves, so idle keys take no memory."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.async_locks: Dict[Tuple[int, Hashable], Tuple[asyncio.Lock, int]] = {}
        self.condition = threading.Condition()
        self.tickets: Dict[Hashable, Deque[object]] = {}

    # asyncio
    def enter_async(self, key: Hashable) -> asyncio.Lock:
        loop_key = (id(asyncio.get_running_loop()), key)
        with self.lock:
            lock, users = self.async_locks.get(loop_key, (None, 0))
            if lock is None:
                lock = asyncio.Lock()
            self.async_locks[loop_key] = (lock, users + 1)
            return lock

    def leave_async(self, key: Hashable) -> None:
        loop_key = (id(asyncio.get_running_loop()), key)
        with self.lock:
            lock, users = self.async_locks[loop_key]
            if users <= 1:
                del self.async_locks[loop_key]
            else:
                self.async_locks[loop_key] = (lock, users - 1)

    # threads
    def enter(self, key: Hashable, deadline: Optional[float]) -> Optional[object]:
        ticket = object()
        with self.condition:
            queue = self.tickets.setdefault(key, collections.deque())
            queue.append(ticket)
            while queue[0] is not ticket:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    self._drop(key, ticket)
                    return None
                self.condition.wait(remaining)
        return ticket

    def leave(self, key: Hashable, ticket: object) -> None:
        with self.condition:
            self._drop(key, ticket)

    def _drop(self, key: Hashable, ticket: object) -> None:
        queue = self.tickets[key]
        queue.remove(ticket)
        if not queue:
            del self.tickets[key]
        self.condition.notify_all()


async def acquire_async(queues: _Queues, key: Hashable, check: ACheck) -> Decision:
    lock = queues.enter_async(key)
    try:
        async with lock:
            while True:
                decision = await check()
                if decision.allowed:
                    break
                if decision.retry_after is None:  # a full table: no wait would help
                    raise RuntimeError("the limiter's table is full (max_keys): no slot "
                                       "for a new key")
                await asyncio.sleep(decision.retry_after)
    finally:
        queues.leave_async(key)
    if decision.wait:
        await asyncio.sleep(decision.wait)
    return decision


def wait_blocking(queues: _Queues, key: Hashable, check: Check,
                  timeout: Optional[float]) -> Optional[Decision]:
    deadline = None if timeout is None else time.monotonic() + timeout
    ticket = queues.enter(key, deadline)
    if ticket is None:
        return None
    try:
        while True:
            decision = check()
            if decision.allowed:
                break
            if decision.retry_after is None:
                raise RuntimeError("the limiter's table is full (max_keys): no slot for a "
                                   "new key")
            if deadline is not None and time.monotonic() + decision.retry_after > deadline:
                return None
            time.sleep(decision.retry_after)
    finally:
        queues.leave(key, ticket)
    if decision.wait:
        time.sleep(decision.wait)
    return decision


class Acquire:
    """What `acquire` returns: await it (`await limiter.acquire(key)`, the admitting
    `Decision`) or enter it (`async with limiter.acquire(key):`). Nothing is given back on
    exit: the slot was used."""

    __slots__ = ("_run", "decision")

    def __init__(self, run: Callable[[], Awaitable[Decision]]) -> None:
        self._run = run
        self.decision: Optional[Decision] = None

    def __await__(self) -> Generator[Any, None, Decision]:
        return self._run().__await__()

    async def __aenter__(self) -> Decision:
        self.decision = await self._run()
        return self.decision

    async def __aexit__(self, kind: Optional[Type[BaseException]],
                        error: Optional[BaseException],
                        traceback: Optional[TracebackType]) -> None:
        return None
