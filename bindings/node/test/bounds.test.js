'use strict';
// Bounds and errors: a full table answers a finite retry and says why; rateLimit's tables
// are bounded (maxKeys, 1,000,000 by default); unknown options throw in every constructor;
// option errors are RangeError / TypeError with ERR_SLUICEGATE_* codes; req.rateLimit has
// express-rate-limit's `current`.

const test = require('node:test');
const assert = require('node:assert/strict');
const { KeyedLimiter, Limiter, RedisLimiter, rateLimit } = require('..');
const { EXPRESS, expressApp, listen, get } = require('./support/apps');
const { freePort } = require('./support/redis');

test('a new key refused by a full table has a finite retryAfter and reason "table-full"', () => {
  const limiter = new KeyedLimiter({ quota: '5/minute', maxKeys: 1 });
  let full = null;
  for (let i = 0; i < 1000 && full === null; i++) {
    const d = limiter.check(`key-${i}`);
    if (!d.allowed) full = d;
  }
  assert.ok(full, 'the table filled up');
  assert.equal(full.reason, 'table-full');
  assert.equal(full.retryAfter, 1000);
  // An ordinary denial has no reason field, and its own retry.
  const one = new KeyedLimiter({ quota: '1/minute' });
  one.check('a');
  const denied = one.check('a');
  assert.equal(denied.allowed, false);
  assert.equal('reason' in denied, false);
  assert.ok(denied.retryAfter > 59_000 && denied.retryAfter <= 60_000);
});

test('unknown options throw in every constructor, naming the one meant', async () => {
  const unknown = (e) => e instanceof TypeError && e.code === 'ERR_SLUICEGATE_UNKNOWN_OPTION';
  assert.throws(() => new KeyedLimiter({ quota: '10/second', maxkeys: 10 }), (e) => unknown(e) && /`maxkeys`; did you mean `maxKeys`\?/.test(e.message));
  assert.throws(() => new Limiter({ quota: '10/second', burst: 3 }), (e) => unknown(e) && /`burst`/.test(e.message));
  await assert.rejects(RedisLimiter.connect({ quota: '10/second', urls: 'redis://127.0.0.1:1/' }), (e) => unknown(e) && /did you mean `url`\?|`urls`/.test(e.message));
  assert.throws(() => rateLimit({ quota: '10/second', maxkeys: 10 }), (e) => unknown(e) && /`maxkeys`; did you mean `maxKeys`\?/.test(e.message));
  assert.throws(() => rateLimit({ windowMs: 1000, limit: () => 5, maxtiers: 2 }), (e) => unknown(e) && /did you mean `maxTiers`\?/.test(e.message));
});

test('messages name a value in English: "an object", "an array", "a Map", never "a Object"', () => {
  const limiter = new KeyedLimiter({ quota: '5/second' });
  assert.throws(() => limiter.check({}), { name: 'TypeError', message: 'a key must be a string, got an object' });
  assert.throws(() => limiter.check(Object.create(null)), { name: 'TypeError', message: 'a key must be a string, got an object' });
  assert.throws(() => limiter.check([]), { name: 'TypeError', message: 'a key must be a string, got an array' });
  assert.throws(() => limiter.check(new Map()), { name: 'TypeError', message: 'a key must be a string, got a Map' });
  assert.throws(() => limiter.check(new Error('x')), { name: 'TypeError', message: 'a key must be a string, got an Error' });
  assert.throws(() => new KeyedLimiter({ quota: {} }), /`quota` must be a string such as '100\/minute burst 20', got an object$/);
});

test('a quota or algorithm the engine refuses is a RangeError with ERR_SLUICEGATE_INVALID_OPTION', () => {
  const invalid = (pattern) => (e) => e instanceof RangeError && e.code === 'ERR_SLUICEGATE_INVALID_OPTION' && pattern.test(e.message);
  assert.throws(() => new KeyedLimiter({ quota: '2/fortnight' }), invalid(/invalid quota "2\/fortnight"/));
  assert.throws(() => new Limiter({ quota: '2/second', algorithm: 'fastest' }), invalid(/fastest/));
});

test("RedisLimiter.connect: a quota or algorithm the engine refuses is the same RangeError, not a connection error", async () => {
  const invalid = (pattern) => (e) => e instanceof RangeError && e.code === 'ERR_SLUICEGATE_INVALID_OPTION' && pattern.test(e.message);
  const url = `redis://127.0.0.1:${await freePort()}/`; // nothing listens: the options are refused before any connection
  await assert.rejects(RedisLimiter.connect({ quota: '2/fortnight', url }), invalid(/invalid quota "2\/fortnight"/));
  await assert.rejects(RedisLimiter.connect({ quota: '2/second', algorithm: 'fastest', url }), invalid(/fastest/));
  await assert.rejects(RedisLimiter.connect({ quota: '2/second', url, connectTimeout: 200 }), (e) => !(e instanceof RangeError) && e.code === 'ERR_SLUICEGATE_REDIS_CONNECT');
});

for (const [label, express] of Object.entries(EXPRESS)) {
  test(`${label}: rateLimit's keyed tables are bounded: maxKeys full answers 503 with Retry-After: 1`, async () => {
    const server = await listen(expressApp(express, rateLimit({ quota: '5/minute', key: 'header:x-key', maxKeys: 1 })));
    try {
      let full = null;
      for (let i = 0; i < 200 && full === null; i++) {
        const r = await get(server.url, '/', { 'x-key': `k${i}` });
        if (r.status !== 200) full = r;
      }
      assert.ok(full, 'the table filled up');
      assert.equal(full.status, 503);
      assert.equal(full.headers['retry-after'], '1');
      assert.match(full.body, /as many clients as it can/);
    } finally {
      await server.close();
    }
  });

  test(`${label}: req.rateLimit has express-rate-limit's current`, async () => {
    const server = await listen(expressApp(express, rateLimit({ quota: '5/minute' })));
    try {
      await get(server.url, '/info');
      const info = JSON.parse((await get(server.url, '/info')).body);
      assert.equal(info.limit, 5);
      assert.equal(info.current, 2);
      assert.equal(info.used, 2);
      assert.equal(info.remaining, 3);
    } finally {
      await server.close();
    }
  });
}

test("rateLimit's option errors say Node's names: 'ip', not the library's 'peer-ip'", () => {
  assert.throws(
    () => rateLimit({ quota: '5/second', key: 'peer:ip' }),
    (e) => e instanceof RangeError && e.code === 'ERR_SLUICEGATE_INVALID_OPTION' && /'ip', 'global', 'header:NAME'/.test(e.message) && !/peer-ip/.test(e.message),
  );
  assert.throws(() => rateLimit({ quota: '5/fortnight' }), (e) => e instanceof RangeError && /fortnight/.test(e.message));
});
