'use strict';
// Forgetting a key, by the engine's reset: KeyedLimiter.reset and RedisLimiter.reset (on a
// real redis-server this file starts on a free loopback port), and the middleware's
// resetKey (express-rate-limit's), in process and on Redis, under express 4 and 5.

const test = require('node:test');
const assert = require('node:assert/strict');
const { KeyedLimiter, RedisLimiter, rateLimit } = require('..');
const { startRedis } = require('./support/redis');
const { EXPRESS, expressApp, listen, get } = require('./support/apps');

let redis;
test.before(async () => {
  redis = await startRedis();
});
test.after(async () => {
  await redis?.stop();
});

test('KeyedLimiter.reset forgets one key: its next request starts afresh', () => {
  const limiter = new KeyedLimiter({ quota: '2/minute' });
  limiter.check('alice');
  limiter.check('alice');
  limiter.check('bob');
  assert.equal(limiter.check('alice').allowed, false);
  assert.equal(limiter.reset('alice'), true);
  assert.equal(limiter.reset('carol'), false, 'never seen');
  assert.equal(limiter.check('alice').remaining, 1, 'afresh');
  assert.equal(limiter.check('bob').remaining, 0, 'another key keeps its count');
  assert.throws(() => limiter.reset(42), TypeError);
});

test('RedisLimiter.reset forgets one key on Redis', async () => {
  const limiter = await RedisLimiter.connect({ quota: '2/minute', url: redis.url, prefix: 'reset:' });
  try {
    await limiter.check('alice');
    await limiter.check('alice');
    assert.equal((await limiter.check('alice')).allowed, false);
    assert.equal(await limiter.reset('alice'), true);
    assert.equal(await limiter.reset('alice'), false, 'already forgotten');
    assert.equal((await limiter.check('alice')).remaining, 1);
  } finally {
    await limiter.close();
  }
});

for (const [label, express] of Object.entries(EXPRESS)) {
  for (const where of ['in process', 'on Redis']) {
    test(`${label}, ${where}: resetKey unblocks a client at once`, async () => {
      const options = { quota: '1/minute', ...(where === 'on Redis' ? { redis: redis.url, name: `reset-${label.replace(' ', '')}` } : {}) };
      const middleware = rateLimit(options);
      const server = await listen(expressApp(express, middleware));
      try {
        assert.equal((await get(server.url)).status, 200);
        assert.equal((await get(server.url)).status, 429);
        assert.equal(await middleware.resetKey('127.0.0.1'), true);
        assert.equal((await get(server.url)).status, 200, 'unblocked');
        assert.equal(await middleware.resetKey('10.9.9.9'), false);
      } finally {
        await server.close();
      }
    });
  }
}
