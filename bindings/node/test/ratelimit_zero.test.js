'use strict';
// `limit: 0` (or `max: 0`) as express-rate-limit v7 treats it: every request is refused with
// a 429, its body and its headers written by the library's one decision and header writer,
// in process and with `redis` (where a limit of 0 needs no state, so Redis is never asked),
// under express 4 and 5.

const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('..');
const { freePort } = require('./support/redis');
const { EXPRESS, serving, get } = require('./support/apps');

for (const [label, express] of Object.entries(EXPRESS)) {
  test(`${label}: max: 0 refuses every request with a 429, Retry-After of one window and RateLimit r=0`, async () => {
    await serving(express, rateLimit({ windowMs: 60_000, max: 0 }), async (server) => {
      for (let i = 0; i < 3; i++) {
        const r = await get(server.url);
        assert.equal(r.status, 429);
        assert.equal(r.headers['retry-after'], '60');
        assert.equal(r.headers.ratelimit, '"ip";r=0;t=60');
        assert.equal(r.headers['ratelimit-policy'], '"ip";q=1;w=60', "the library's quotas start at 1: the policy gives the window");
        assert.equal(r.body, 'too many requests for limit "ip"; retry after 60 seconds\n');
      }
    });
  });

  test(`${label}: limit: 0 with draft-7 and legacy headers says limit 0, remaining 0; handler and req.rateLimit as for any refusal`, async () => {
    let seen = null;
    const middleware = rateLimit({
      windowMs: 30_000,
      limit: 0,
      standardHeaders: 'draft-7',
      legacyHeaders: true,
      handler: (req, res) => {
        seen = { ...req.rateLimit.toJSON(), resetTime: undefined };
        res.status(429).send('closed');
      },
    });
    await serving(express, middleware, async (server) => {
      const before = Math.floor(Date.now() / 1000);
      const r = await get(server.url);
      assert.equal(r.status, 429);
      assert.equal(r.body, 'closed');
      assert.equal(r.headers.ratelimit, 'limit=0, remaining=0, reset=30');
      assert.equal(r.headers['x-ratelimit-limit'], '0');
      assert.equal(r.headers['x-ratelimit-remaining'], '0');
      const reset = Number(r.headers['x-ratelimit-reset']);
      assert.ok(reset >= before + 30 && reset <= before + 32, `X-RateLimit-Reset ${reset}`);
      assert.deepEqual(seen, { name: 'ip', limit: 0, used: 0, current: 0, remaining: 0, resetTime: undefined, key: '127.0.0.1' });
      assert.equal(await middleware.getKey('127.0.0.1'), undefined, 'a limit of 0 counts nothing');
    });
  });

  test(`${label}: a limit function returning 0 closes only the requests it returns 0 for`, async () => {
    const middleware = rateLimit({ windowMs: 60_000, limit: (req) => (req.headers['x-banned'] ? 0 : 2) });
    await serving(express, middleware, async (server) => {
      assert.equal((await get(server.url, '/', { 'x-banned': '1' })).status, 429);
      assert.equal((await get(server.url)).status, 200);
      assert.equal((await get(server.url)).status, 200);
      assert.equal((await get(server.url)).status, 429);
    });
  });

  test(`${label}: with redis, max: 0 refuses at once without asking Redis (even while it is down)`, async () => {
    const down = `redis://127.0.0.1:${await freePort()}/`;
    await serving(express, rateLimit({ windowMs: 1000, max: 0, redis: down, onBackendError: 'allow' }), async (server) => {
      const r = await get(server.url);
      assert.equal(r.status, 429, 'not let through by onBackendError');
      assert.equal(r.headers['retry-after'], '1');
    });
  });
}

test("a quota string of 0 is still refused: only express-rate-limit's limit/max of 0 means 'block everything'", () => {
  assert.throws(() => rateLimit({ quota: '0/minute' }), (e) => e instanceof RangeError && e.code === 'ERR_SLUICEGATE_INVALID_OPTION' && /at least 1/.test(e.message));
  assert.throws(() => rateLimit({ windowMs: 1000, limit: -1 }), { name: 'RangeError', message: /`limit` must be a whole number between 0 and 4294967295, got -1/ });
  assert.throws(() => rateLimit({ windowMs: 1000, max: 0.5 }), { name: 'RangeError', message: /`max` must be a whole number/ });
});
