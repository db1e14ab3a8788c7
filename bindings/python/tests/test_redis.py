"""RedisLimiter against a real redis-server: every algorithm, blocking and asyncio forms,
errors, a Redis that is down or stalled, the GIL released while a call waits, context
managers, and one limit shared by threads and by another process."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
from conftest import RedisServer

from sluicegate import ManualClock, RedisError, RedisLimiter

ALGORITHMS = ["gcra", "token-bucket", "leaky-bucket", "fixed-window", "sliding-window",
              "sliding-log"]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_blocking(redis_server: RedisServer, prefix: str, algorithm: str) -> None:
    with RedisLimiter("3/minute", url=redis_server.url, algorithm=algorithm,
                      prefix=prefix) as limiter:
        assert (limiter.algorithm, limiter.quota, limiter.prefix) == (algorithm, "3/minute", prefix)
        assert limiter.peek("user:42", cost=3).allowed
        decisions = [limiter.check("user:42") for _ in range(4)]
        assert [bool(d) for d in decisions] == [True, True, True, False]
        assert [d.remaining for d in decisions[:3]] == [2, 1, 0]
        assert all(d.limit == 3 for d in decisions)
        denied = decisions[3]
        assert denied.retry_after is not None and 0 < denied.retry_after <= 60
        assert 0 < denied.reset_after <= 120  # a sliding window remembers two windows
        assert limiter.check("user:43").allowed  # another key is its own
        assert not limiter.hit("user:44", 5).allowed  # recorded though over
        assert not limiter.peek("user:44")


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_async(redis_server: RedisServer, prefix: str, algorithm: str) -> None:
    async def main() -> None:
        async with RedisLimiter("3/minute", url=redis_server.url, algorithm=algorithm,
                                prefix=prefix) as limiter:
            assert (await limiter.apeek("user:42", cost=3)).allowed
            decisions = [await limiter.acheck("user:42") for _ in range(4)]
            assert [bool(d) for d in decisions] == [True, True, True, False]
            assert [d.remaining for d in decisions[:3]] == [2, 1, 0]
            assert decisions[3].retry_after is not None and decisions[3].retry_after > 0
            assert not (await limiter.ahit("user:44", 5)).allowed
            assert not await limiter.apeek("user:44")
            # Many awaitables at once on one key: exactly the limit admitted.
            together = await asyncio.gather(*[limiter.acheck("crowd") for _ in range(20)])
            assert sum(map(bool, together)) == 3
        assert limiter.closed

    asyncio.run(main())


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_threads_on_one_redis_limiter_admit_exactly_the_quota(
    redis_server: RedisServer, prefix: str, algorithm: str
) -> None:
    # The manual clock does not move, so exactly the capacity is admitted whatever the order.
    limiter = RedisLimiter("40/minute", url=redis_server.url, algorithm=algorithm,
                           prefix=prefix, clock=ManualClock(), timeout=2.0)
    admitted = [0] * 8
    start = threading.Barrier(8)

    def run(thread: int) -> None:
        start.wait()
        admitted[thread] = sum(bool(limiter.check("shared")) for _ in range(15))

    workers = [threading.Thread(target=run, args=(t,)) for t in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sum(admitted) == limiter.max_cost == 40
    limiter.close()


def test_another_process_shares_the_limit(redis_server: RedisServer, prefix: str) -> None:
    # Both processes send one manual time (0): on Redis's clock a minute's edge could fall
    # between the two processes' calls and carry part of the first into the next window.
    limiter = RedisLimiter("5/minute", url=redis_server.url, algorithm="sliding-window",
                           prefix=prefix, clock=ManualClock())
    assert limiter.check("user:42").remaining == 4
    other = (f"from sluicegate import ManualClock, RedisLimiter\n"
             f"l = RedisLimiter('5/minute', url={redis_server.url!r}, "
             f"algorithm='sliding-window', prefix={prefix!r}, clock=ManualClock())\n"
             f"print(l.check('user:42', cost=3).remaining)\n")
    result = subprocess.run([sys.executable, "-c", other], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"
    assert limiter.check("user:42").remaining == 0
    assert not limiter.check("user:42")


def test_a_cost_that_can_never_fit_is_a_value_error_before_any_round_trip(
    unused_port: int,
) -> None:
    # Redis is down: the capacity error still comes first, from the engine's own check.
    limiter = RedisLimiter("5/second burst 3", url=f"redis://127.0.0.1:{unused_port}/",
                           lazy=True)
    with pytest.raises(ValueError,
                       match="^a request of cost 4 can never be admitted: the capacity is 3$"):
        limiter.check("a", cost=4)

    async def later() -> None:
        with pytest.raises(ValueError, match="can never be admitted"):
            await limiter.apeek("a", cost=4)

    asyncio.run(later())


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"quota": "5/fortnight"}, ValueError, 'invalid quota "5/fortnight"'),
        ({"quota": "5/second", "algorithm": "cell"}, ValueError, 'unknown algorithm "cell"'),
        ({"quota": "100000/second", "algorithm": "sliding-log"}, ValueError,
         "the largest limit on Redis is 65536"),
        ({"quota": "5/second", "url": "nope://here"}, ValueError, "bad Redis URL"),
        ({"quota": "5/second", "prefix": "{api}:"}, ValueError, "prefix"),
        ({"quota": "5/second", "timeout": 0}, ValueError, "timeout must be longer than zero"),
        ({"quota": "5/second", "timeout": -1.0}, ValueError, "timeout takes a finite number"),
        ({"quota": 5}, TypeError, "quota must be a str, got int"),
        ({"quota": "5/second", "clock": "now"}, TypeError, "clock must be a sluicegate.ManualClock"),
    ],
)
def test_bad_arguments_say_what_is_wrong(
    redis_server: RedisServer, arguments: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error) as raised:
        RedisLimiter(**{"url": redis_server.url, **arguments})
    assert message in str(raised.value)


@pytest.mark.parametrize("method", ["check", "peek", "hit"])
def test_a_bad_key_or_cost_says_what_is_wrong(redis_server: RedisServer, method: str) -> None:
    limiter = RedisLimiter("5/second", url=redis_server.url)
    with pytest.raises(TypeError, match="^key must be a str, got int$"):
        getattr(limiter, method)(42)
    with pytest.raises(ValueError, match="^cost must not be negative, got -2"):
        getattr(limiter, method)("a", -2)
    with pytest.raises(ValueError, match="whole number"):
        getattr(limiter, method)("a", 0.5)


def test_a_redis_that_is_down_at_connect_raises_promptly(unused_port: int) -> None:
    start = time.monotonic()
    with pytest.raises(RedisError) as raised:
        RedisLimiter("5/second", url=f"redis://127.0.0.1:{unused_port}/")
    # A refused loopback connection fails at once; 2 s is slack for a loaded machine, far
    # below a connect that waited for a server (it would never end).
    assert time.monotonic() - start < 2.0
    assert isinstance(raised.value, ConnectionError)
    assert raised.value.kind == "unavailable"
    assert "Redis is unavailable" in str(raised.value)


def test_a_lazy_limiter_fails_fast_while_redis_is_down_and_uses_it_once_up(
    unused_port: int, prefix: str
) -> None:
    # A 2 s timeout: failing fast is then told apart from waiting out the timeout (2 s a
    # call) by bounds halfway between.
    limiter = RedisLimiter("5/second", url=f"redis://127.0.0.1:{unused_port}/", lazy=True,
                           prefix=prefix, timeout=2.0)
    assert not limiter.available
    start = time.monotonic()
    with pytest.raises(RedisError) as raised:
        limiter.check("a")
    assert raised.value.kind == "unavailable"

    async def down() -> None:
        with pytest.raises(RedisError):
            await limiter.acheck("a")

    asyncio.run(down())
    assert time.monotonic() - start < 2.0
    server = RedisServer(port=unused_port)
    try:
        deadline = time.monotonic() + 5
        while True:
            try:
                assert limiter.check("a").remaining == 4
                break
            except RedisError:
                assert time.monotonic() < deadline, "the limiter never used the Redis that came up"
                time.sleep(0.05)
        assert limiter.available
    finally:
        server.stop()
    # Redis gone again: an error, promptly.
    start = time.monotonic()
    with pytest.raises(RedisError):
        limiter.check("a")
    assert time.monotonic() - start < 1.0


def test_a_stalled_redis_times_out_promptly_and_is_used_again(
    own_redis: RedisServer, prefix: str
) -> None:
    limiter = RedisLimiter("100/second", url=own_redis.url, prefix=prefix, timeout=0.2)
    assert limiter.check("a")
    own_redis.pause()
    try:
        start = time.monotonic()
        with pytest.raises(RedisError) as raised:
            limiter.check("a")
        assert raised.value.kind in ("timeout", "unavailable")
        # The 0.2 s timeout, with slack for a loaded machine; a call that waited for the
        # stalled Redis would never return.
        assert time.monotonic() - start < 1.0

        async def stalled() -> None:
            with pytest.raises(RedisError):
                await limiter.acheck("a")

        asyncio.run(stalled())
        assert time.monotonic() - start < 2.0
    finally:
        own_redis.resume()
    deadline = time.monotonic() + 5
    while True:
        try:
            assert limiter.check("a")
            break
        except RedisError:
            assert time.monotonic() < deadline, "the limiter never used Redis again"
            time.sleep(0.05)


def test_the_gil_is_released_while_a_blocking_call_waits(own_redis: RedisServer) -> None:
    limiter = RedisLimiter("100/second", url=own_redis.url, timeout=1.0)
    assert limiter.check("a")
    own_redis.pause()
    returned: list[float] = []

    def waiting() -> None:
        try:
            limiter.check("a")
        except RedisError:
            pass
        returned.append(time.monotonic())

    try:
        waiter = threading.Thread(target=waiting)
        waiter.start()
        time.sleep(0.1)  # the call is now waiting on the stalled Redis
        counted = 0
        until = time.monotonic() + 0.3
        while time.monotonic() < until:
            counted += 1
        finished_counting = time.monotonic()
        waiter.join()
    finally:
        own_redis.resume()
    # This thread ran Python while the call waited: the call had let go of the GIL.
    assert counted > 1000
    assert finished_counting < returned[0]


def test_close_and_the_context_managers(redis_server: RedisServer, prefix: str) -> None:
    limiter = RedisLimiter("5/second", url=redis_server.url, prefix=prefix)
    assert not limiter.closed and "closed" not in repr(limiter)
    limiter.close()
    limiter.close()  # twice is fine
    assert limiter.closed and repr(limiter).endswith(", closed)")
    for call in (lambda: limiter.check("a"), lambda: limiter.peek("a"),
                 lambda: limiter.hit("a", 1)):
        with pytest.raises(RuntimeError, match="^this RedisLimiter is closed$"):
            call()
    with RedisLimiter("5/second", url=redis_server.url, prefix=prefix) as entered:
        assert entered.check("a")
    assert entered.closed

    async def main() -> None:
        async with RedisLimiter("5/second", url=redis_server.url, prefix=prefix) as limiter:
            assert isinstance(limiter, RedisLimiter)
            assert await limiter.acheck("a")
        assert limiter.closed
        with pytest.raises(RuntimeError, match="closed"):
            await limiter.acheck("a")

    asyncio.run(main())


# Python 3.12+ warns that fork() in a process with threads may deadlock the child: the
# situation this test creates on purpose, to show that the child gets an error instead.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")
def test_a_process_forked_after_a_redis_limiter_refuses_instead_of_hanging(
    redis_server: RedisServer, prefix: str
) -> None:
    # The runtime's threads do not survive fork(): the child must get an error, never hang.
    limiter = RedisLimiter("5/second", url=redis_server.url, prefix=prefix)
    assert limiter.check("a")
    child = os.fork()
    if child == 0:  # the child: exit 0 only if every call refused with the fork message
        code = 0
        for call in (lambda: limiter.check("a"),
                     lambda: RedisLimiter("5/second", url=redis_server.url)):
            try:
                call()
                code = 1
            except RuntimeError as error:
                code = code or (0 if "forked" in str(error) else 2)
            except BaseException:
                code = 3
        os._exit(code)
    deadline = time.monotonic() + 10
    while True:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            os.kill(child, 9)
            os.waitpid(child, 0)
            pytest.fail("the forked child hung on a RedisLimiter call")
        time.sleep(0.01)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert limiter.check("a")  # the parent's limiter still works
