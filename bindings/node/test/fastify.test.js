'use strict';
// `sluicegate/fastify` on real fastify, over real HTTP on 127.0.0.1: @fastify/rate-limit's
// options, and the library's headers and client addresses (the same as express's `rateLimit`
// sends for the same limit).

const test = require('node:test');
const assert = require('node:assert/strict');
const Fastify = require('fastify');
const express = require('express');
const sluicegateFastify = require('sluicegate/fastify');
const { rateLimit } = require('sluicegate');
const { expressApp, listen, get } = require('./support/apps');

/** A fastify app with the plugin registered with `options`, `routes(app)` added (default: GET /
 * answering 'ok'), listening on a free port; resolves with `{ url, app, close }`. */
async function serve(options, routes = (app) => app.get('/', async () => 'ok')) {
  const app = Fastify();
  await app.register(sluicegateFastify, options);
  routes(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `http://127.0.0.1:${app.server.address().port}`, app, close: () => app.close() };
}

/** Runs `fn(server)` against `serve(options, routes)`, then closes it. */
async function serving(options, routes, fn) {
  const server = await serve(options, routes);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

test("max + timeWindow: @fastify/rate-limit's headers and refusal, the library's numbers", async () => {
  await serving({ max: 2, timeWindow: '1 minute' }, undefined, async ({ url }) => {
    const first = await get(url);
    assert.equal(first.status, 200);
    assert.equal(first.body, 'ok');
    assert.equal(first.headers['x-ratelimit-limit'], '2');
    assert.equal(first.headers['x-ratelimit-remaining'], '1');
    // The library's draft-6 numbers under @fastify/rate-limit's names: the seconds left.
    assert.equal(first.headers['x-ratelimit-reset'], '60');
    assert.equal(first.headers['ratelimit-policy'], '2;w=60');
    assert.equal(first.headers['ratelimit-limit'], undefined);
    assert.equal((await get(url)).headers['x-ratelimit-remaining'], '0');
    const refused = await get(url);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '60');
    assert.equal(refused.headers['x-ratelimit-remaining'], '0');
    assert.match(refused.headers['content-type'], /^application\/json/);
    assert.deepEqual(JSON.parse(refused.body), { statusCode: 429, error: 'Too Many Requests', message: 'Rate limit exceeded, retry in 1 minute' });
  });
});

test('the same limit sends the same rate-limit headers as the express middleware', async () => {
  const names = ['ratelimit-policy', 'ratelimit', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining'];
  const pick = (r) => [r.status, ...names.map((n) => r.headers[n])];
  const viaExpress = await listen(expressApp(express, rateLimit({ windowMs: 60_000, limit: 2, standardHeaders: 'draft-10' })));
  try {
    await serving({ max: 2, timeWindow: 60_000, standardHeaders: 'draft-10', errorResponseBuilder: () => ({ statusCode: 429 }) }, undefined, async ({ url }) => {
      for (let i = 0; i < 3; i++) {
        const [f, e] = [await get(url), await get(viaExpress.url)];
        assert.deepEqual(pick(f), pick(e), `request ${i + 1}`);
      }
    });
  } finally {
    await viaExpress.close();
  }
});

test("the client address is the library's: X-Forwarded-For counts only through trustedProxies", async () => {
  await serving({ max: 1, timeWindow: 60_000 }, undefined, async ({ url }) => {
    assert.equal((await get(url, '/', { 'x-forwarded-for': '203.0.113.1' })).status, 200);
    // Another forwarded address from the same untrusted peer is the same client.
    assert.equal((await get(url, '/', { 'x-forwarded-for': '203.0.113.2' })).status, 429);
  });
  await serving({ max: 1, timeWindow: 60_000, trustedProxies: ['127.0.0.1'] }, undefined, async ({ url }) => {
    assert.equal((await get(url, '/', { 'x-forwarded-for': '203.0.113.1' })).status, 200);
    assert.equal((await get(url, '/', { 'x-forwarded-for': '203.0.113.2' })).status, 200);
    assert.equal((await get(url, '/', { 'x-forwarded-for': '203.0.113.1' })).status, 429);
  });
});

test('keyGenerator gets fastify\'s request; allowList takes keys or a function of (request, key)', async () => {
  const keyGenerator = (request) => request.headers['x-user'];
  await serving({ max: 1, timeWindow: 60_000, keyGenerator, allowList: ['vip'] }, undefined, async ({ url }) => {
    assert.equal((await get(url, '/', { 'x-user': 'a' })).status, 200);
    assert.equal((await get(url, '/', { 'x-user': 'a' })).status, 429);
    assert.equal((await get(url, '/', { 'x-user': 'b' })).status, 200);
    for (let i = 0; i < 3; i++) {
      const vip = await get(url, '/', { 'x-user': 'vip' });
      assert.equal(vip.status, 200);
      assert.equal(vip.headers['x-ratelimit-limit'], undefined, 'an allowed key is not counted');
    }
  });
  const seen = [];
  const allowList = async (request, key) => {
    seen.push([request.url, key]);
    return key === '127.0.0.1' && request.headers['x-pass'] === 'yes';
  };
  await serving({ max: 1, timeWindow: 60_000, allowList }, undefined, async ({ url }) => {
    assert.equal((await get(url, '/', { 'x-pass': 'yes' })).status, 200);
    assert.equal((await get(url, '/', { 'x-pass': 'yes' })).status, 200);
    assert.equal((await get(url)).status, 200);
    assert.equal((await get(url)).status, 429);
  });
  // The default key, found by the library before deciding, is the peer's address.
  assert.deepEqual(seen[0], ['/', '127.0.0.1']);
});

test('global: false limits only routes with config.rateLimit; per-route options override the global ones', async () => {
  await serving({ global: false, max: 100 }, (app) => {
    app.get('/free', async () => 'free');
    app.get('/tight', { config: { rateLimit: { max: 1, timeWindow: '1 minute' } } }, async () => 'tight');
  }, async ({ url }) => {
    for (let i = 0; i < 3; i++) assert.equal((await get(url, '/free')).status, 200);
    assert.equal((await get(url, '/tight')).status, 200);
    assert.equal((await get(url, '/tight')).status, 429);
  });
  await serving({ max: 1, timeWindow: 60_000 }, (app) => {
    app.get('/', async () => 'ok');
    app.get('/more', { config: { rateLimit: { max: 3 } } }, async () => 'more');
    app.get('/none', { config: { rateLimit: false } }, async () => 'none');
  }, async ({ url }) => {
    assert.equal((await get(url, '/')).status, 200);
    assert.equal((await get(url, '/')).status, 429);
    // The route's own limit (max 3, the global timeWindow), counted apart from the global one.
    for (let i = 0; i < 3; i++) assert.equal((await get(url, '/more')).status, 200);
    const over = await get(url, '/more');
    assert.equal(over.status, 429);
    assert.equal(over.headers['x-ratelimit-limit'], '3');
    for (let i = 0; i < 3; i++) assert.equal((await get(url, '/none')).status, 200);
  });
});

test('routes with one groupId share a limit; fastify.rateLimit() is a hook of its own', async () => {
  await serving({ global: false, max: 2, timeWindow: 60_000 }, (app) => {
    app.get('/a', { config: { rateLimit: { groupId: 'g' } } }, async () => 'a');
    app.get('/b', { config: { rateLimit: { groupId: 'g' } } }, async () => 'b');
    app.get('/own', { onRequest: app.rateLimit({ max: 1 }) }, async () => 'own');
  }, async ({ url }) => {
    assert.equal((await get(url, '/a')).status, 200);
    assert.equal((await get(url, '/b')).status, 200);
    assert.equal((await get(url, '/a')).status, 429);
    assert.equal((await get(url, '/own')).status, 200);
    assert.equal((await get(url, '/own')).status, 429);
  });
});

test('errorResponseBuilder, onExceeding, onExceeded, ban, and the preHandler hook', async () => {
  const events = [];
  const options = {
    max: 1,
    timeWindow: 60_000,
    hook: 'preHandler',
    ban: 1,
    onExceeding: (request, key) => events.push(['exceeding', key]),
    onExceeded: (request, key) => events.push(['exceeded', key]),
    onBanReach: (request, key) => events.push(['ban', key]),
    errorResponseBuilder: (request, context) => ({ statusCode: context.statusCode, code: context.ban ? 'banned' : 'slow down', after: context.after, max: context.max }),
  };
  await serving(options, undefined, async ({ url }) => {
    assert.equal((await get(url)).status, 200);
    const refused = await get(url);
    assert.equal(refused.status, 429);
    assert.deepEqual(JSON.parse(refused.body), { statusCode: 429, code: 'slow down', after: '1 minute', max: 1 });
    // `ban: 1`: one 429 in the window, then 403s.
    const banned = await get(url);
    assert.equal(banned.status, 403);
    assert.equal(JSON.parse(banned.body).code, 'banned');
  });
  assert.deepEqual(events, [['exceeding', '127.0.0.1'], ['exceeded', '127.0.0.1'], ['exceeded', '127.0.0.1'], ['ban', '127.0.0.1']]);
});

test('addHeaders and addHeadersOnExceeding leave headers out; enableDraftSpec sends draft-6\'s', async () => {
  const options = {
    max: 1,
    timeWindow: 60_000,
    addHeadersOnExceeding: { 'x-ratelimit-reset': false },
    addHeaders: { 'retry-after': false, 'x-ratelimit-limit': false },
  };
  await serving(options, undefined, async ({ url }) => {
    const ok = await get(url);
    assert.equal(ok.headers['x-ratelimit-reset'], undefined);
    assert.equal(ok.headers['x-ratelimit-limit'], '1');
    const refused = await get(url);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], undefined);
    assert.equal(refused.headers['x-ratelimit-limit'], undefined);
    assert.equal(refused.headers['x-ratelimit-remaining'], '0');
  });
  await serving({ max: 2, timeWindow: 60_000, enableDraftSpec: true }, undefined, async ({ url }) => {
    const ok = await get(url);
    assert.equal(ok.headers['ratelimit-limit'], '2');
    assert.equal(ok.headers['ratelimit-remaining'], '1');
    assert.equal(ok.headers['ratelimit-reset'], '60');
    assert.equal(ok.headers['x-ratelimit-limit'], undefined);
  });
  // sluicegate's own header options replace @fastify/rate-limit's forms.
  await serving({ max: 2, timeWindow: 60_000, standardHeaders: 'draft-10', legacyHeaders: false }, undefined, async ({ url }) => {
    const ok = await get(url);
    assert.equal(ok.headers.ratelimit, '"ip";r=1;t=60');
    assert.equal(ok.headers['x-ratelimit-limit'], undefined);
  });
});

test('max as a function of (request, key): a limit per answer', async () => {
  const max = (request, key) => (request.headers['x-plan'] === 'pro' ? 3 : 1) + (key === '127.0.0.1' ? 0 : 100);
  await serving({ max, timeWindow: 60_000 }, undefined, async ({ url }) => {
    assert.equal((await get(url)).status, 200);
    assert.equal((await get(url)).status, 429);
    for (let i = 0; i < 3; i++) assert.equal((await get(url, '/', { 'x-plan': 'pro' })).status, 200);
    const over = await get(url, '/', { 'x-plan': 'pro' });
    assert.equal(over.status, 429);
    assert.equal(over.headers['x-ratelimit-limit'], '3');
  });
});

test("options with no counterpart, and unknown ones, are refused at register", async () => {
  for (const [options, pattern] of [
    [{ store: class {} }, /`store` \(@fastify\/rate-limit\) has no counterpart/],
    [{ continueExceeding: true }, /`continueExceeding`.*cannot extend the window/],
    [{ maxx: 3 }, /maxx/],
  ]) {
    const app = Fastify();
    await assert.rejects(async () => {
      await app.register(sluicegateFastify, options);
      await app.ready();
    }, pattern);
    await app.close();
  }
});

test("the key allowList and callbacks see is the library's, as express's rateLimit counts it", async () => {
  const headers = { 'x-forwarded-for': '2001:db8:abcd:12::1, 198.51.100.7' };
  const viaExpress = await listen(expressApp(express, rateLimit({ windowMs: 60_000, limit: 5, trustedProxies: ['127.0.0.1', '198.51.100.0/24'] })));
  let expected;
  try {
    expected = JSON.parse((await get(viaExpress.url, '/info', headers)).body).key;
  } finally {
    await viaExpress.close();
  }
  const seen = [];
  await serving({ max: 5, timeWindow: 60_000, trustedProxies: ['127.0.0.1', '198.51.100.0/24'], allowList: (request, key) => seen.push(key) && false }, undefined, async ({ url }) => {
    assert.equal((await get(url, '/', headers)).status, 200);
  });
  // The nearest untrusted hop, an IPv6 client grouped by its /64, as the library writes it.
  assert.match(expected, /^2001:db8:abcd:12:/);
  assert.deepEqual(seen, [expected]);
});
