"""RedisLimiter on a Redis Cluster of three masters: every algorithm, keys spread over the
slots of every node, blocking and asyncio."""

from __future__ import annotations

import asyncio

import pytest
from conftest import RedisServer

from sluicegate import RedisLimiter

ALGORITHMS = ["gcra", "token-bucket", "leaky-bucket", "fixed-window", "sliding-window",
              "sliding-log"]
KEYS = [f"user:{n}" for n in range(30)]


def seeds(nodes: list[RedisServer]) -> str:
    return ",".join(node.url for node in nodes)


def keys_per_node(nodes: list[RedisServer]) -> list[int]:
    """How many Redis keys each node holds."""
    return [int(node.cli("DBSIZE").strip() or 0) for node in nodes]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_on_a_cluster(
    redis_cluster: list[RedisServer], prefix: str, algorithm: str
) -> None:
    before = keys_per_node(redis_cluster)
    limiter = RedisLimiter("2/minute", url=seeds(redis_cluster), algorithm=algorithm,
                           prefix=prefix, cluster=True, timeout=2.0)
    for key in KEYS:
        assert [bool(limiter.check(key)) for _ in range(3)] == [True, True, False], key

    async def main() -> None:
        decisions = await asyncio.gather(*[limiter.acheck(key) for key in KEYS])
        assert not any(decisions)
        assert all(d.retry_after is not None and d.retry_after > 0 for d in decisions)
        fresh = await asyncio.gather(*[limiter.apeek(f"other:{key}") for key in KEYS])
        assert all(fresh)

    asyncio.run(main())
    grown = [after - was for after, was in zip(keys_per_node(redis_cluster), before)]
    assert all(count > 0 for count in grown), f"some node holds none of the keys: {grown}"
    assert sum(grown) == len(KEYS)
    limiter.close()
