'use strict';
// express-rate-limit's `windowMs` counts in a window that starts at each client's first
// request (the library's anchored fixed window), so a refused client waits out its own
// window, whatever the time of day; `quota` + `algorithm: 'fixed-window'` keeps windows
// aligned to the clock's edges, and `quota: '… anchored'` asks for anchoring by name. In
// process and on Redis, under express 4 and 5.

const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('..');
const { startRedis } = require('./support/redis');
const { EXPRESS, serving, get } = require('./support/apps');

let redis;
test.before(async () => {
  redis = await startRedis();
});
test.after(async () => {
  await redis?.stop();
});

/** The `t=` of a draft-8 `RateLimit` header. */
function resetOf(response) {
  const t = /;t=(\d+)/.exec(response.headers.ratelimit);
  assert.ok(t, `RateLimit: ${response.headers.ratelimit}`);
  return Number(t[1]);
}

for (const [label, express] of Object.entries(EXPRESS)) {
  for (const where of ['in process', 'on Redis']) {
    const on = (name) => (where === 'on Redis' ? { redis: redis.url, name: `${name}-${label.replace(' ', '')}-${process.pid}` } : {});

    test(`${label} ${where}: windowMs starts each client's window at its first request`, async () => {
      const middleware = rateLimit({ windowMs: 60_000, limit: 2, ...on('windowms') });
      await serving(express, middleware, async (server) => {
        const first = await get(server.url);
        assert.equal(first.status, 200);
        assert.equal(resetOf(first), 60, 'the window runs one minute from this request');
        assert.equal((await get(server.url)).status, 200);
        const refused = await get(server.url);
        assert.equal(refused.status, 429);
        assert.equal(refused.headers['retry-after'], '60', 'whatever the time of day');
        // Another client (by its forwarded address, trusted from loopback) has its own window.
        const other = rateLimit({ windowMs: 60_000, limit: 2, key: 'header:x-client', ...on('windowms-other') });
        await serving(express, other, async (second) => {
          const a = await get(second.url, '/', { 'x-client': 'a' });
          await new Promise((resolve) => setTimeout(resolve, 1_100));
          const b = await get(second.url, '/', { 'x-client': 'b' });
          assert.equal(resetOf(b), 60, "b's window starts at b's first request");
          assert.ok(resetOf(a) === 60 && resetOf(await get(second.url, '/', { 'x-client': 'a' })) === 59, "a's window is a second older");
        });
      });
    });

    test(`${label} ${where}: quota with fixed-window stays aligned to the clock; 'anchored' anchors it`, async () => {
      const aligned = rateLimit({ quota: '1/minute', algorithm: 'fixed-window', ...on('aligned') });
      const anchored = rateLimit({ quota: '1/minute anchored', algorithm: 'fixed-window', ...on('anchored') });
      await serving(express, aligned, async (server) => {
        const before = Math.floor(Date.now() / 1000);
        const r = await get(server.url);
        const after = Math.ceil(Date.now() / 1000);
        const edge = (s) => 60 - (s % 60);
        const t = resetOf(r);
        assert.ok(t <= Math.max(edge(before), edge(after)) && t >= Math.min(edge(before), edge(after)) - 1, `t=${t}: to the next whole minute`);
      });
      await serving(express, anchored, async (server) => {
        assert.equal(resetOf(await get(server.url)), 60);
        assert.equal((await get(server.url)).headers['retry-after'], '60');
      });
    });
  }

  test(`${label}: an anchored quota with an algorithm that has no windows is refused when built`, () => {
    assert.throws(() => rateLimit({ quota: '1/minute anchored', algorithm: 'gcra' }), /anchored/);
  });
}
