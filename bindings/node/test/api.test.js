'use strict';
// The classes' contract (DESIGN.md §2, "Node.js and Python"): decisions, units, errors and
// their types and messages, a shared ManualClock, `size`.

const test = require('node:test');
const assert = require('node:assert/strict');
const { Limiter, KeyedLimiter, ManualClock } = require('..');

const ALGORITHMS = ['gcra', 'token-bucket', 'leaky-bucket', 'fixed-window', 'sliding-window', 'sliding-log'];

test('a decision is a plain object with every number, times in ms', () => {
  const clock = new ManualClock();
  const limiter = new KeyedLimiter({ quota: '2/second', algorithm: 'gcra', clock });
  const first = limiter.check('user:42');
  assert.deepEqual(first, { allowed: true, limit: 2, remaining: 1, retryAfter: null, resetAfter: 500, wait: 0 });
  limiter.check('user:42');
  const denied = limiter.check('user:42');
  assert.deepEqual(denied, { allowed: false, limit: 2, remaining: 0, retryAfter: 500, resetAfter: 1000, wait: 0 });
  clock.advance(250);
  assert.equal(limiter.peek('user:42').retryAfter, 250);
});

test('the algorithm defaults to gcra, as in Rust', () => {
  const clock = new ManualClock();
  const byDefault = new Limiter({ quota: '5/second burst 3', clock });
  const gcra = new Limiter({ quota: '5/second burst 3', algorithm: 'gcra', clock });
  for (let i = 0; i < 5; i++) assert.deepEqual(byDefault.check(), gcra.check());
  assert.equal(byDefault.algorithm, 'gcra');
});

test('peek consumes nothing, hit records unconditionally, costs weigh', () => {
  for (const algorithm of ALGORITHMS) {
    const clock = new ManualClock();
    const limiter = new KeyedLimiter({ quota: '3/second', algorithm, clock });
    assert.equal(limiter.peek('k').remaining, 2, `${algorithm}: what would remain after it`);
    assert.equal(limiter.peek('k', 3).allowed, true, algorithm);
    assert.equal(limiter.peek('k').remaining, 2, `${algorithm}: peeks consumed nothing`);
    assert.equal(limiter.check('k', 2).remaining, 1, algorithm);
    assert.equal(limiter.check('k', 2).allowed, false, algorithm);
    assert.equal(limiter.hit('k', 2).allowed, false, `${algorithm}: a hit beyond the limit is not within it`);
    assert.equal(limiter.check('k').allowed, false, `${algorithm}: the hit was recorded`);
  }
});

test('the leaky bucket tells an admitted request how long to wait', () => {
  const limiter = new Limiter({ quota: '10/second', algorithm: 'leaky-bucket', clock: new ManualClock() });
  assert.equal(limiter.check().wait, 0);
  assert.equal(limiter.check().wait, 100);
  assert.equal(limiter.check().wait, 200);
});

test('limiters on one ManualClock share its time; fractions round to the nanosecond', () => {
  const clock = new ManualClock();
  const a = new Limiter({ quota: '1/second', algorithm: 'fixed-window', clock });
  const b = new KeyedLimiter({ quota: '1/second', algorithm: 'fixed-window', clock });
  assert.ok(a.check().allowed && b.check('x').allowed);
  clock.advance(999.9999994); // rounds to 999,999,999 ns: still the first window
  assert.equal(clock.now, 999.999999);
  assert.ok(!a.check().allowed && !b.check('x').allowed);
  assert.equal(a.peek().retryAfter, 0.000001);
  clock.advance(0.000001);
  assert.ok(a.check().allowed && b.check('x').allowed);
  clock.set(0);
  assert.equal(clock.now, 0);
  assert.equal(new ManualClock(1500).now, 1500);
});

test('size counts the keys held', () => {
  const clock = new ManualClock();
  const limiter = new KeyedLimiter({ quota: '5/second', clock });
  assert.equal(limiter.size, 0);
  for (const key of ['a', 'b', 'c', 'a', '', 'ключ', 'x'.repeat(1000)]) limiter.check(key);
  assert.equal(limiter.size, 6);
  limiter.peek('never-checked');
  assert.equal(limiter.size, 6, 'a peek adds no key');
});

test('long and non-ASCII keys are exact keys', () => {
  const limiter = new KeyedLimiter({ quota: '1/minute', clock: new ManualClock() });
  const long = 'k'.repeat(300);
  const near = 'é'.repeat(255); // 255 units: at the stack buffer's edge
  // Lone surrogates: UTF-8 would turn both into U+FFFD and make them one key.
  for (const key of [long, `${long}!`, near, `${near}e`, 'ключ', 'ключ2', '\uD800', '\uD801', '\uFFFD', 'x'.repeat(256), 'x'.repeat(255)]) {
    assert.equal(limiter.check(key).allowed, true, `first check of a ${key.length}-unit key`);
    assert.equal(limiter.check(key).allowed, false, `second check of a ${key.length}-unit key`);
  }
  assert.equal(limiter.size, 11);
});

test('maxKeys bounds the table: new keys are denied when it is full of live keys', () => {
  const limiter = new KeyedLimiter({ quota: '1/hour', maxKeys: 64, clock: new ManualClock() });
  let denied = 0;
  for (let i = 0; i < 1000; i++) {
    const d = limiter.check(`k${i}`);
    if (!d.allowed) {
      denied += 1;
      assert.equal(d.reason, 'table-full', `k${i} is denied for the table only: each key is new`);
    }
  }
  // On a manual clock every key stays live (1/hour), so the table fills to its bound exactly
  // (64 over the shards, ceil(64 / shards) each) and every other new key is denied.
  assert.equal(limiter.size, 64);
  assert.equal(denied, 1000 - 64);
  const full = limiter.check('one more');
  assert.equal(full.allowed, false);
  assert.equal(full.reason, 'table-full');
  assert.equal(full.retryAfter, 1000, 'a full table hints one second');
});

test('a cost that can never fit is a RangeError saying so; hit records it anyway', () => {
  const limiter = new KeyedLimiter({ quota: '5/second burst 3', clock: new ManualClock() });
  assert.equal(limiter.maxCost, 3);
  assert.throws(() => limiter.check('k', 4), { name: 'RangeError', message: 'a request of cost 4 can never be admitted: the capacity is 3' });
  assert.throws(() => limiter.peek('k', 4), RangeError);
  assert.equal(limiter.hit('k', 4).allowed, false);
  const one = new Limiter({ quota: '10/minute', algorithm: 'sliding-log' });
  assert.throws(() => one.check(11), { name: 'RangeError', message: /cost 11 can never be admitted: the capacity is 10/ });
});

test('bad costs are TypeErrors or RangeErrors naming the problem', () => {
  const limiter = new KeyedLimiter({ quota: '5/second' });
  assert.throws(() => limiter.check('k', -1), { name: 'RangeError', message: /between 0 and 4294967295, got -1/ });
  assert.throws(() => limiter.check('k', 1.5), { name: 'RangeError', message: /whole number, got 1.5/ });
  assert.throws(() => limiter.check('k', 2 ** 32), { name: 'RangeError', message: /got 4294967296/ });
  assert.throws(() => limiter.check('k', NaN), { name: 'RangeError', message: /whole number, got NaN/ });
  assert.throws(() => limiter.check('k', '2'), { name: 'TypeError', message: /a cost must be a number, got "2"/ });
  assert.throws(() => limiter.check('k', 2n), { name: 'TypeError', message: /a cost must be a number, got 2n/ });
  assert.throws(() => new Limiter({ quota: '5/s' }).hit(null), TypeError);
  assert.equal(limiter.check('k', 0).allowed, true);
  assert.equal(limiter.check('k', undefined).remaining, 4, 'undefined means 1');
});

test('non-string keys are TypeErrors', () => {
  const limiter = new KeyedLimiter({ quota: '5/second' });
  for (const key of [42, undefined, null, {}, Symbol('k'), ['a']]) {
    assert.throws(() => limiter.check(key), { name: 'TypeError', message: /a key must be a string/ });
  }
  assert.throws(() => limiter.peek(1), TypeError);
  assert.throws(() => limiter.hit(1), TypeError);
});

test("bad quotas and algorithms are RangeErrors with the engine's sentence", () => {
  // The parser's sentence, whose list of units is the parser's own.
  assert.throws(() => new Limiter({ quota: '2/fortnight' }), {
    name: 'RangeError',
    code: 'ERR_SLUICEGATE_INVALID_OPTION',
    message: /^invalid quota "2\/fortnight": unknown period unit 'fortnight' \(expected ns, us, ms, s, m, h, d, .*second, minute, hour, day.*\) at column 3$/,
  });
  assert.throws(() => new KeyedLimiter({ quota: '0/second' }), { message: /limit must be at least 1/ });
  assert.throws(() => new KeyedLimiter({ quota: '5/s', algorithm: 'leaky' }), {
    message: /unknown algorithm "leaky": expected gcra, token-bucket, leaky-bucket, fixed-window, sliding-window or sliding-log/,
  });
  assert.throws(() => new KeyedLimiter({ quota: '100000000/s', algorithm: 'sliding-log' }), {
    message: /^SlidingLog cannot run this quota: .* the largest limit is 16777216$/,
  });
  assert.throws(() => new KeyedLimiter(), { name: 'TypeError', message: /options object/ });
  assert.throws(() => new KeyedLimiter({ quota: 5 }), { name: 'TypeError', message: /`quota` must be a string/ });
  assert.throws(() => new Limiter({ quota: '5/s', algorithm: 3 }), { name: 'TypeError', message: /`algorithm` must be one of/ });
  assert.throws(() => new Limiter({ quota: '5/s', clock: {} }), { name: 'TypeError', message: /`clock` must be a ManualClock/ });
  assert.throws(() => new KeyedLimiter({ quota: '5/s', maxKeys: 0 }), { name: 'RangeError', message: /`maxKeys` must be a whole number between 1/ });
});

test('ManualClock refuses times that are not finite, non-negative numbers', () => {
  const clock = new ManualClock();
  assert.throws(() => clock.advance(-1), { name: 'RangeError', message: /0 or more, got -1/ });
  assert.throws(() => clock.advance(Infinity), RangeError);
  assert.throws(() => clock.set(NaN), RangeError);
  assert.throws(() => clock.advance('1'), TypeError);
  assert.throws(() => new ManualClock(-5), RangeError);
});

test('the real clock runs by itself', async () => {
  const limiter = new Limiter({ quota: '1/50ms' });
  assert.ok(limiter.check().allowed);
  const denied = limiter.check();
  assert.ok(!denied.allowed && denied.retryAfter > 0 && denied.retryAfter <= 50);
  await new Promise((resolve) => setTimeout(resolve, Math.ceil(denied.retryAfter) + 2));
  assert.ok(limiter.check().allowed);
});

test('the ESM entry exports the same classes, and rateLimit as the default export, as express-rate-limit', async () => {
  const esm = await import('../index.mjs');
  const cjs = require('..');
  for (const name of ['Limiter', 'KeyedLimiter', 'RedisLimiter', 'ManualClock', 'DateClock', 'rateLimit', 'throttle']) {
    assert.equal(typeof cjs[name], 'function', name);
    assert.equal(esm[name], cjs[name], name);
  }
  // `import rateLimit from 'sluicegate'`, `const rateLimit = require('sluicegate')`, and the
  // `default` that TypeScript's and Babel's CommonJS interop read: all the middleware.
  assert.equal(esm.default, cjs.rateLimit);
  assert.equal(cjs, cjs.rateLimit);
  assert.equal(cjs.default, cjs.rateLimit);
  assert.equal(typeof cjs({ quota: '5/second' }), 'function');
});
