'use strict';
// DateClock, the test aid: a limit on it follows Date.now(), so the fake timers of a user's
// own tests (sinon's here, jest's alike) move it, where the engine's clock reads the
// machine's. As a user's test would: sinon fakes Date, the app runs on real express.

const test = require('node:test');
const assert = require('node:assert/strict');
const sinon = require('sinon');
const { rateLimit, KeyedLimiter, Limiter, DateClock } = require('..');
const { EXPRESS, expressApp, listen, get } = require('./support/apps');

test("a rateLimit on a DateClock moves with sinon's fake timers: a window ends when they say", async () => {
  const timers = sinon.useFakeTimers({ now: Date.UTC(2030, 0, 1), toFake: ['Date'] });
  const limiter = rateLimit({ windowMs: 60_000, limit: 1, clock: new DateClock() });
  const engineClock = rateLimit({ windowMs: 60_000, limit: 1 });
  const server = await listen(expressApp(EXPRESS['express 5'], limiter));
  const control = await listen(expressApp(EXPRESS['express 5'], engineClock));
  try {
    assert.equal((await get(server.url)).status, 200);
    const refused = await get(server.url);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '60');
    assert.deepEqual([(await get(control.url)).status, (await get(control.url)).status], [200, 429]);
    timers.tick(59_000);
    assert.equal((await get(server.url)).headers['retry-after'], '1');
    timers.tick(1_000);
    assert.equal((await get(server.url)).status, 200, 'the window ended on the fake clock');
    assert.equal((await get(control.url)).status, 429, 'the engine\'s own clock did not move');
  } finally {
    await server.close();
    await control.close();
    timers.restore();
  }
});

test('Limiter and KeyedLimiter on a DateClock follow Date.now() at each call', () => {
  const timers = sinon.useFakeTimers({ now: 1_000_000, toFake: ['Date'] });
  try {
    const clock = new DateClock();
    const perUser = new KeyedLimiter({ quota: '2/second', algorithm: 'fixed-window', clock });
    const one = new Limiter({ quota: '1/second', algorithm: 'fixed-window', clock });
    assert.equal(perUser.check('a').allowed, true);
    assert.equal(perUser.check('a').allowed, true);
    const denied = perUser.check('a');
    assert.equal(denied.allowed, false);
    assert.equal(denied.retryAfter, 1000);
    assert.equal(one.check().allowed, true);
    assert.equal(one.peek().allowed, false);
    timers.tick(400);
    assert.equal(perUser.peek('a').retryAfter, 600);
    timers.tick(600);
    assert.equal(perUser.check('a').allowed, true);
    assert.equal(one.hit().allowed, true);
    assert.equal(clock.now, 1_001_000);
  } finally {
    timers.restore();
  }
});
