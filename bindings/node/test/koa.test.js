'use strict';
// `sluicegate/koa` on real koa, over real HTTP on 127.0.0.1: koa-ratelimit's options, and the
// library's headers, refusals and client addresses.

const test = require('node:test');
const assert = require('node:assert/strict');
const Koa = require('koa');
const ratelimit = require('sluicegate/koa');
const { listen, get } = require('./support/apps');

/** Serves a koa app with `middleware` in front of a handler answering 'ok', for `fn(server)`. */
async function serving(middleware, fn) {
  const app = new Koa();
  // koa's own error handling answers thrown errors; with `throw: true` that is the refusal.
  app.use(middleware);
  app.use((ctx) => {
    ctx.body = 'ok';
  });
  const server = await listen(app.callback());
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

test("duration + max: the library's X-RateLimit-* trio, Retry-After and refusal", async () => {
  await serving(ratelimit({ duration: 60_000, max: 2 }), async ({ url }) => {
    const first = await get(url);
    assert.equal(first.status, 200);
    assert.equal(first.body, 'ok');
    assert.equal(first.headers['x-ratelimit-limit'], '2');
    assert.equal(first.headers['x-ratelimit-remaining'], '1');
    const reset = Number(first.headers['x-ratelimit-reset']);
    assert.ok(Math.abs(reset - (Date.now() / 1000 + 60)) < 5, `x-ratelimit-reset ${reset}`);
    assert.equal((await get(url)).status, 200);
    const refused = await get(url);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '60');
    assert.equal(refused.headers['x-ratelimit-remaining'], '0');
    assert.equal(refused.body, 'too many requests for limit "ip"; retry after 60 seconds\n');
  });
});

test("id(ctx) keys requests; X-Forwarded-For counts only through trustedProxies", async () => {
  await serving(ratelimit({ duration: 60_000, max: 1, id: (ctx) => ctx.get('x-user') }), async ({ url }) => {
    assert.equal((await get(url, '/', { 'x-user': 'a' })).status, 200);
    assert.equal((await get(url, '/', { 'x-user': 'a' })).status, 429);
    assert.equal((await get(url, '/', { 'x-user': 'b' })).status, 200);
  });
  await serving(ratelimit({ duration: 60_000, max: 1 }), async ({ url }) => {
    assert.equal((await get(url, '/', { 'x-forwarded-for': '203.0.113.1' })).status, 200);
    assert.equal((await get(url, '/', { 'x-forwarded-for': '203.0.113.2' })).status, 429);
  });
  await serving(ratelimit({ duration: 60_000, max: 1, trustedProxies: ['127.0.0.0/8'] }), async ({ url }) => {
    assert.equal((await get(url, '/', { 'x-forwarded-for': '203.0.113.1' })).status, 200);
    assert.equal((await get(url, '/', { 'x-forwarded-for': '203.0.113.2' })).status, 200);
  });
});

test('headers renames the trio; disableHeader sends none', async () => {
  const headers = { remaining: 'Rate-Limit-Remaining', reset: 'Rate-Limit-Reset', total: 'Rate-Limit-Total' };
  await serving(ratelimit({ duration: 60_000, max: 3, headers }), async ({ url }) => {
    const ok = await get(url);
    assert.equal(ok.headers['rate-limit-total'], '3');
    assert.equal(ok.headers['rate-limit-remaining'], '2');
    assert.ok(Number(ok.headers['rate-limit-reset']) > Date.now() / 1000);
    assert.equal(ok.headers['x-ratelimit-limit'], undefined);
  });
  await serving(ratelimit({ duration: 60_000, max: 1, disableHeader: true }), async ({ url }) => {
    const ok = await get(url);
    assert.equal(ok.headers['x-ratelimit-limit'], undefined);
    assert.equal(ok.headers.ratelimit, undefined);
    assert.equal((await get(url)).status, 429);
  });
});

test('whitelist passes uncounted, blacklist answers 403', async () => {
  const middleware = ratelimit({
    duration: 60_000,
    max: 1,
    whitelist: (ctx) => ctx.get('x-role') === 'admin',
    blacklist: (ctx) => ctx.get('x-role') === 'banned',
  });
  await serving(middleware, async ({ url }) => {
    for (let i = 0; i < 3; i++) assert.equal((await get(url, '/', { 'x-role': 'admin' })).status, 200);
    assert.equal((await get(url, '/', { 'x-role': 'banned' })).status, 403);
    assert.equal((await get(url)).status, 200);
    assert.equal((await get(url)).status, 429);
  });
});

test('errorMessage answers a refusal; throw: true refuses through ctx.throw with the headers', async () => {
  const limited = [];
  await serving(ratelimit({ duration: 60_000, max: 1, errorMessage: 'Slow down.', onLimited: (ctx) => limited.push(ctx.path) }), async ({ url }) => {
    await get(url);
    const refused = await get(url, '/x');
    assert.equal(refused.status, 429);
    assert.equal(refused.body, 'Slow down.');
  });
  assert.deepEqual(limited, ['/x']);
  await serving(ratelimit({ duration: 60_000, max: 1, throw: true, errorMessage: 'Thrown.' }), async ({ url }) => {
    await get(url);
    const refused = await get(url);
    assert.equal(refused.status, 429);
    assert.equal(refused.body, 'Thrown.');
    assert.equal(refused.headers['retry-after'], '60');
    assert.equal(refused.headers['x-ratelimit-remaining'], '0');
  });
});

test("ctx.state.rateLimit is the request's info (the library's key and numbers)", async () => {
  const app = new Koa();
  app.use(ratelimit({ duration: 60_000, max: 3 }));
  app.use((ctx) => {
    ctx.body = ctx.state.rateLimit;
  });
  const server = await listen(app.callback());
  try {
    const info = JSON.parse((await get(server.url)).body);
    assert.equal(info.key, '127.0.0.1');
    assert.equal(info.limit, 3);
    assert.equal(info.remaining, 2);
  } finally {
    await server.close();
  }
});

test("koa-ratelimit's store options, and unknown ones, are refused", () => {
  assert.throws(() => ratelimit({ driver: 'memory', db: new Map() }), /`driver` \(koa-ratelimit\) has no counterpart/);
  assert.throws(() => ratelimit({ duraton: 1000 }), /duraton/);
});
