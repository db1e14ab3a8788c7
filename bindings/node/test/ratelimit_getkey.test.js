'use strict';
// express-rate-limit's `getKey` on the rateLimit middleware (the engine's peek: consuming
// nothing) and its `req.rateLimit.key` (the key the reported limit counted the request
// under), in process and on a real redis-server this file starts on a free loopback port,
// under express 4 and 5.

const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('..');
const { startRedis, freePort } = require('./support/redis');
const { EXPRESS, serving, get } = require('./support/apps');

let redis;
test.before(async () => {
  redis = await startRedis();
});
test.after(async () => {
  await redis?.stop();
});

/** Runs `fn(server)` with `middleware` in front of an app of `express`, closing it after. */
let names = 0;
for (const [label, express] of Object.entries(EXPRESS)) {
  for (const where of ['in process', 'on Redis']) {
    const placed = () => (where === 'on Redis' ? { redis: redis.url, name: `getkey-${++names}-${process.pid}` } : {});

    test(`${label}, ${where}: getKey resolves to { totalHits, resetTime } of a known key, undefined otherwise, and consumes nothing`, async () => {
      const middleware = rateLimit({ windowMs: 60_000, limit: 5, ...placed() });
      await serving(express, middleware, async (server) => {
        const pending = middleware.getKey('127.0.0.1');
        assert.ok(pending instanceof Promise);
        assert.equal(await pending, undefined, 'no request yet');
        assert.equal((await get(server.url)).status, 200);
        assert.equal((await get(server.url)).status, 200);
        const before = Date.now();
        const known = await middleware.getKey('127.0.0.1');
        assert.deepEqual(Object.keys(known).sort(), ['resetTime', 'totalHits']);
        assert.equal(known.totalHits, 2);
        assert.ok(known.resetTime instanceof Date);
        assert.ok(known.resetTime.getTime() > before && known.resetTime.getTime() <= before + 60_000 + 50, `resetTime ${known.resetTime.toISOString()}`);
        for (let i = 0; i < 10; i++) assert.equal((await middleware.getKey('127.0.0.1')).totalHits, 2, 'a peek consumes nothing');
        const info = JSON.parse((await get(server.url, '/info')).body);
        assert.equal(info.used, 3, 'the third request is the third hit');
        assert.equal(info.remaining, 2);
        assert.equal((await middleware.getKey('127.0.0.1')).totalHits, 3);
        assert.equal(await middleware.getKey('10.1.2.3'), undefined, 'another key');
        assert.equal(await middleware.resetKey('127.0.0.1'), true);
        assert.equal(await middleware.getKey('127.0.0.1'), undefined, 'forgotten');
      });
    });

    test(`${label}, ${where}: req.rateLimit.key is the key the reported limit counted the request under`, async () => {
      // Named apart on the shared Redis: each test's limits start empty.
      const [ip, tenant, user] = ['ip', 'tenant', 'user'].map((n) => (where === 'on Redis' ? `${n}-${++names}-${process.pid}` : n));
      const middleware = rateLimit({
        limits: [
          { name: ip, key: 'ip', quota: '100/minute' },
          { name: tenant, key: 'header:x-tenant', quota: '3/minute' },
          { name: user, key: (req) => `user:${req.headers['x-user']}`, quota: '50/minute' },
        ],
        ...(where === 'on Redis' ? { redis: redis.url } : {}),
      });
      await serving(express, middleware, async (server) => {
        // The tenant limit is the tightest, so it is the one reported.
        let info = JSON.parse((await get(server.url, '/info', { 'x-tenant': 'acme', 'x-user': 'ann' })).body);
        assert.equal(info.name, tenant);
        assert.equal(info.key, 'acme');
        assert.equal((await middleware.getKey('acme', tenant)).totalHits, 1);
        for (let i = 0; i < 2; i++) await get(server.url, '/info', { 'x-tenant': 'acme', 'x-user': 'ann' });
        // Another tenant's request is reported by its own tenant key.
        info = JSON.parse((await get(server.url, '/info', { 'x-tenant': 'other', 'x-user': 'bob' })).body);
        assert.equal(info.name, tenant);
        assert.equal(info.key, 'other');
        assert.equal((await middleware.getKey('acme', tenant)).totalHits, 3);
        assert.equal((await middleware.getKey('127.0.0.1', ip)).totalHits, 4);
        assert.equal((await middleware.getKey('user:ann', user)).totalHits, 3);
        assert.equal((await middleware.getKey('127.0.0.1')).totalHits, 4, 'the first limit when no name is given');
        assert.equal(await middleware.getKey('acme'), undefined, 'not a key of the first limit');
      });
    });
  }

  test(`${label}: req.rateLimit.key for the client address and a key function's string; getKey through a limit function's tiers`, async () => {
    await serving(express, rateLimit({ quota: '5/minute' }), async (server) => {
      const info = JSON.parse((await get(server.url, '/info')).body);
      assert.equal(info.key, '127.0.0.1');
    });
    const byFunction = rateLimit({ windowMs: 60_000, limit: (req) => (req.headers['x-plan'] === 'pro' ? 10 : 2), keyGenerator: (req) => `k-${req.headers['x-id']}` });
    await serving(express, byFunction, async (server) => {
      const info = JSON.parse((await get(server.url, '/info', { 'x-id': '7', 'x-plan': 'pro' })).body);
      assert.equal(info.key, 'k-7');
      assert.equal(info.limit, 10);
      await get(server.url, '/info', { 'x-id': '8' });
      await get(server.url, '/info', { 'x-id': '8' });
      assert.equal((await byFunction.getKey('k-7')).totalHits, 1);
      assert.equal((await byFunction.getKey('k-8')).totalHits, 2);
      assert.equal(await byFunction.getKey('k-9'), undefined);
      await assert.rejects(byFunction.getKey(9), TypeError);
    });
  });
}

test("getKey's totalHits per algorithm: the capacity's units in use (the burst's for a bucket, the window's count for windows)", async () => {
  const cases = [
    ['gcra', '10/hour burst 20'],
    ['token-bucket', '10/hour burst 20'],
    ['leaky-bucket', '10/hour'],
    ['fixed-window', '10/hour'],
    ['sliding-window', '10/hour'],
    ['sliding-log', '10/hour'],
  ];
  for (const [algorithm, quota] of cases) {
    const middleware = rateLimit({ quota, algorithm, key: 'header:x-k' });
    // Leaky-bucket admissions are held for their shaping wait: one request only there.
    const requests = algorithm === 'leaky-bucket' ? 1 : 3;
    await serving(EXPRESS['express 5'], middleware, async (server) => {
      for (let i = 0; i < requests; i++) assert.equal((await get(server.url, '/', { 'x-k': 'a' })).status, 200);
      const known = await middleware.getKey('a');
      assert.equal(known?.totalHits, requests, `${algorithm}: ${JSON.stringify(known)}`);
      assert.ok(known.resetTime.getTime() > Date.now(), algorithm);
    });
  }
});

test('getKey refuses a key that is not a string or a limit name it does not know; rejects with the Redis error when Redis is down', async () => {
  const middleware = rateLimit({ limits: [{ name: 'a', key: 'ip', quota: '5/minute' }] });
  await assert.rejects(middleware.getKey(42), { name: 'TypeError', message: /a key must be a string, got 42 \(number\)/ });
  await assert.rejects(middleware.getKey('x', 'b'), { name: 'TypeError', message: /no limit is named "b"; the limits are "a"/ });
  const down = rateLimit({ quota: '5/minute', redis: `redis://127.0.0.1:${await freePort()}/` });
  await assert.rejects(down.getKey('127.0.0.1'), (e) => e instanceof Error && /^ERR_SLUICEGATE_REDIS_[A-Z_]+$/.test(e.code));
});
