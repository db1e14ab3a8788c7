"""The middlewares' limits on a Redis Cluster of three masters (`redis_cluster=True`): one
limit per client, the clients' keys spread over every node, blocking (WSGI) and asyncio
(ASGI) alike."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List

from conftest import RedisServer

from sluicegate import HttpLimiter

CLIENTS = [f"192.0.2.{n}" for n in range(1, 31)]


def environ(client: str) -> Dict[str, Any]:
    return {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "REMOTE_ADDR": client}


def scope(client: str) -> Dict[str, Any]:
    return {"type": "http", "method": "GET", "path": "/", "headers": [],
            "client": [client, 4000]}


def test_limits_on_a_cluster(redis_cluster: List[RedisServer]) -> None:
    for node in redis_cluster:
        node.cli("FLUSHALL")
    seeds = ",".join(node.url for node in redis_cluster)
    options: Dict[str, Any] = {"redis": seeds, "redis_cluster": True}
    wsgi = HttpLimiter([{"name": "cluster", "key": "ip", "quota": "2/minute"}], **options)
    asgi = HttpLimiter([{"name": "cluster", "key": "ip", "quota": "2/minute"}], **options)
    blocking = [wsgi.decide_wsgi(environ(client)).status for client in CLIENTS]

    async def awaited() -> List[int]:
        return [(await asgi.adecide_asgi(scope(client))).status for client in CLIENTS * 2]

    # The second middleware shares the limit: one more each, then 429s.
    assert blocking == [0] * len(CLIENTS)
    assert asyncio.run(awaited()) == [0] * len(CLIENTS) + [429] * len(CLIENTS)
    held = [int(node.cli("DBSIZE").strip() or 0) for node in redis_cluster]
    assert sum(held) == len(CLIENTS) and all(held), held
