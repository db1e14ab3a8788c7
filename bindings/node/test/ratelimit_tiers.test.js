'use strict';
// `limit` / `max` as a function of the request (sync or async), as express-rate-limit takes
// it: each distinct number is a middleware of its own, out of at most `maxTiers`; under
// express 4 and 5.

const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('..');
const { EXPRESS, expressApp, listen, get } = require('./support/apps');

async function statuses(url, n, headers) {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await get(url, '/', headers)).status);
  return out;
}

for (const [label, express] of Object.entries(EXPRESS)) {
  test(`${label}: limit as a function gives each plan its own limit (sync and async)`, async () => {
    const plan = (req) => (req.headers['x-plan'] === 'pro' ? 3 : 1);
    for (const options of [
      { windowMs: 60_000, limit: plan },
      { windowMs: 60_000, max: async (req) => plan(req) },
    ]) {
      const server = await listen(expressApp(express, rateLimit(options)));
      try {
        assert.deepEqual(await statuses(server.url, 2), [200, 429]);
        assert.deepEqual(await statuses(server.url, 4, { 'x-plan': 'pro' }), [200, 200, 200, 429]);
        const info = await get(server.url, '/', { 'x-plan': 'pro' });
        assert.match(info.headers['ratelimit-policy'], /q=3;w=60/);
      } finally {
        await server.close();
      }
    }
  });

  test(`${label}: at most maxTiers distinct limits; a bad one is an error through next`, async () => {
    const limit = (req) => Number(req.headers['x-limit']);
    const server = await listen(expressApp(express, rateLimit({ windowMs: 60_000, limit, maxTiers: 2 })));
    try {
      assert.equal((await get(server.url, '/', { 'x-limit': '5' })).status, 200);
      assert.equal((await get(server.url, '/', { 'x-limit': '6' })).status, 200);
      assert.equal((await get(server.url, '/', { 'x-limit': '7' })).status, 500, 'a third distinct limit');
      assert.equal((await get(server.url, '/', { 'x-limit': '5' })).status, 200, 'a known one still works');
      assert.equal((await get(server.url, '/', { 'x-limit': 'many' })).status, 500, 'NaN is no limit');
    } finally {
      await server.close();
    }
  });
}

test('the other options are checked when the middleware is made', () => {
  assert.throws(() => rateLimit({ windowMs: 60_000, limit: () => 5, maxTierz: 2 }), /unknown option `maxTierz`/);
  assert.throws(() => rateLimit({ windowMs: 60_000, limit: () => 5, maxTiers: 0 }), RangeError);
});
