'use strict';
// rateLimit with its limits on a real redis-server: what Redis being down answers
// (onBackendError), two Node processes sharing one limit, a Node process and the Rust
// example server sharing one limit by its name, and a Redis Cluster.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const express = require('express');
const { rateLimit } = require('..');
const { expressApp, listen, get, rateLimitHeaders } = require('./support/apps');
const { startRedis, startCluster, freePort } = require('./support/redis');
const { startHttpServer, startExpressWorker } = require('./support/servers');

let redis;
test.before(async () => {
  redis = await startRedis();
});
test.after(async () => {
  await redis?.stop();
});

/** Runs `fn(servers)` with `servers` started, stopping every one after. */
async function withServers(starts, fn) {
  const servers = [];
  try {
    for (const start of starts) servers.push(await start());
    await fn(servers);
  } finally {
    for (const server of servers) await server.stop();
  }
}

/** GETs from `servers` in turn, `rounds` times over; the answers, in order. */
async function takeTurns(servers, rounds) {
  const answers = [];
  for (let round = 0; round < rounds; round++) {
    for (const server of servers) answers.push(await get(server.url));
  }
  return answers;
}

test("Redis down: 'allow' lets requests through with the policy but no RateLimit; 'deny' answers 503 with Retry-After: 1, promptly", async () => {
  const down = `redis://127.0.0.1:${await freePort()}/`;
  for (const [onBackendError, status] of [['allow', 200], ['deny', 503]]) {
    const server = await listen(expressApp(express, rateLimit({ quota: '5/second', redis: down, onBackendError })));
    try {
      const start = performance.now();
      const answer = await get(server.url);
      assert.ok(performance.now() - start < 1500, `answered in ${(performance.now() - start).toFixed(0)} ms`);
      assert.equal(answer.status, status, onBackendError);
      if (onBackendError === 'allow') {
        assert.deepEqual(rateLimitHeaders(answer), [['ratelimit-policy', '"ip";q=5;w=1']]);
      } else {
        assert.equal(answer.headers['retry-after'], '1');
        assert.equal(answer.body, 'limit "ip": the rate limiter is unavailable; retry after 1 second\n');
      }
    } finally {
      await server.close();
    }
  }
});

test('two Node processes (express 4 and express 5) share one limit on Redis', async () => {
  const options = { limits: [{ name: 'two-node', key: 'ip', quota: '4/minute', algorithm: 'sliding-window' }], redis: redis.url };
  await withServers([() => startExpressWorker('express4', options), () => startExpressWorker('express', options)], async (servers) => {
    const answers = await takeTurns(servers, 3);
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 429, 429]);
    assert.deepEqual(answers.slice(0, 4).map((a) => a.headers.ratelimit.split(';')[1]), ['r=3', 'r=2', 'r=1', 'r=0']);
  });
});

test('a Node process and the Rust http_server share one limit on Redis, by its name, quota and algorithm', async () => {
  const limit = { name: 'shared', key: 'ip', quota: '4/minute', algorithm: 'gcra' };
  const rust = () => startHttpServer(['--redis', redis.url, '--limit', `name=${limit.name}; key=peer-ip; quota=${limit.quota}; algorithm=${limit.algorithm}`]);
  // The legacy trio off, as http_server sends it without --legacy-headers.
  const node = () => startExpressWorker('express', { limits: [limit], redis: redis.url, legacyHeaders: false });
  await withServers([rust, node], async (servers) => {
    // Taking turns: Rust, Node, Rust, Node, ... against one limit of 4.
    const answers = await takeTurns(servers, 3);
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 429, 429]);
    assert.deepEqual(answers.slice(0, 4).map((a) => a.headers.ratelimit), ['"shared";r=3;t=15', '"shared";r=2;t=30', '"shared";r=1;t=45', '"shared";r=0;t=60']);
    // Both refuse alike, to the byte.
    const [fromRust, fromNode] = answers.slice(4);
    assert.deepEqual(rateLimitHeaders(fromNode, ['content-type']), rateLimitHeaders(fromRust, ['content-type']));
    assert.equal(fromNode.body, fromRust.body);
    assert.equal(fromNode.headers['retry-after'], '15');
  });
  // Where every HTTP front end keeps an HTTP limit named N: sluicegate:http:N:.
  const keys = spawnSync('redis-cli', ['-p', String(redis.port), '--scan', '--pattern', 'sluicegate:http:shared:*'], { encoding: 'utf8' });
  assert.equal(keys.stdout.split('\n').filter(Boolean).length, 1, `one state for the one client: ${keys.stdout}${keys.stderr}`);
});

test('a Redis Cluster: redisCluster takes the seed nodes', async () => {
  const cluster = await startCluster(3);
  try {
    const limits = [{ name: 'cluster', key: 'header:x-user', quota: '2/minute', algorithm: 'token-bucket' }];
    const server = await listen(expressApp(express, rateLimit({ limits, redisCluster: cluster.urls, onBackendError: 'deny' })));
    try {
      for (const user of ['alice', 'bob', 'carol', 'dave']) {
        const statuses = [];
        for (let i = 0; i < 3; i++) statuses.push((await get(server.url, '/', { 'x-user': user })).status);
        assert.deepEqual(statuses, [200, 200, 429], user);
      }
    } finally {
      await server.close();
    }
  } finally {
    await cluster.stop();
  }
});
