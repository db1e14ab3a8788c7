'use strict';
// What a response and req.rateLimit report: on a route's 429 behind an app-wide limit, the
// headers of the limit that refused (not the app-wide one's, set earlier); req.rateLimit's
// resetTime, the same instant for every request of a window, as getKey says it; and an
// algorithm named in another spelling reported as the library names it. Real express 4 and 5.

const test = require('node:test');
const assert = require('node:assert/strict');
const sinon = require('sinon');
const { rateLimit, KeyedLimiter, DateClock, throttle } = require('..');
const { EXPRESS, listen, get } = require('./support/apps');

for (const [label, express] of Object.entries(EXPRESS)) {
  test(`${label}: a route's 429 carries the headers of the limit that refused, not an app-wide limit's`, async () => {
    // The app-wide limit writes headers the route's does not (the legacy trio, draft-6's
    // three): none of them may describe the route's refusal.
    const app = express();
    app.use(rateLimit({ name: 'app', quota: '100/minute', standardHeaders: 'draft-6', legacyHeaders: true }));
    app.get('/login', rateLimit({ name: 'login', quota: '1/minute', legacyHeaders: false }), (req, res) => res.send('ok'));
    const server = await listen(app);
    try {
      const passed = await get(server.url, '/login');
      assert.equal(passed.headers.ratelimit, '"login";r=0;t=60');
      assert.equal(passed.headers['x-ratelimit-remaining'], '99', 'a pass keeps what the earlier middleware said');
      const refused = await get(server.url, '/login');
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.ratelimit, '"login";r=0;t=60');
      assert.equal(refused.headers['ratelimit-policy'], '"login";q=1;w=60');
      assert.equal(refused.headers['retry-after'], '60');
      for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
        assert.equal(refused.headers[name], undefined, `${name}: the app-wide limit's, on the route's 429`);
      }
    } finally {
      await server.close();
    }
  });

  test(`${label}: req.rateLimit.resetTime is the window's end for every request in it, as getKey says`, async () => {
    const timers = sinon.useFakeTimers({ now: Date.UTC(2030, 0, 1, 12, 0, 0, 123), toFake: ['Date'] });
    const app = express();
    // On the engine's clock, and on a DateClock (exact to the millisecond).
    const limits = { engine: rateLimit({ windowMs: 60_000, limit: 5 }), date: rateLimit({ windowMs: 60_000, limit: 5, clock: new DateClock() }) };
    for (const [name, limiter] of Object.entries(limits)) {
      app.get(`/${name}`, limiter, (req, res) => res.json({ resetTime: req.rateLimit.resetTime, key: req.rateLimit.key }));
    }
    const server = await listen(app);
    try {
      for (const [name, limiter] of Object.entries(limits)) {
        const resets = [];
        const first = Date.now();
        for (let i = 0; i < 3; i++) {
          resets.push(Date.parse(JSON.parse((await get(server.url, `/${name}`)).body).resetTime));
          await new Promise((resolve) => setTimeout(resolve, 15));
          timers.tick(15);
        }
        const { resetTime } = await limiter.getKey('127.0.0.1');
        if (name === 'date') {
          assert.deepEqual(resets, [resets[0], resets[0], resets[0]], 'one instant per window');
          assert.equal(resets[0], first + 60_000, 'the first request plus windowMs');
          assert.equal(resetTime.getTime(), resets[0]);
        } else {
          // The engine's clock and Date.now() are two clocks: within a millisecond.
          for (const reset of [...resets, resetTime.getTime()]) assert.ok(Math.abs(reset - resets[0]) <= 1, `${reset} drifted from ${resets[0]}`);
        }
      }
    } finally {
      timers.restore();
      await server.close();
    }
  });
}

test("an algorithm is reported as the library names it: 'sliding_window' is 'sliding-window'", () => {
  assert.equal(new KeyedLimiter({ quota: '5/second', algorithm: 'Sliding_Window' }).algorithm, 'sliding-window');
  assert.throws(() => new KeyedLimiter({ quota: '5/second', algorithm: 'moving-window' }), { name: 'RangeError', message: /unknown algorithm "moving-window".*sliding-window/ });
  const api = throttle({ interceptors: { request: { use() {} }, response: { use() {} } } }, { quota: '5/second', algorithm: 'TOKEN_BUCKET' });
  api.setRateLimitOptions({ quota: '10/second', algorithm: 'token-bucket' }); // the same algorithm, however spelled
  assert.equal(api.getMaxRPS(), 10);
});
