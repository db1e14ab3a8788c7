'use strict';
// `sluicegate/hono` on real hono served by @hono/node-server, over real HTTP on 127.0.0.1:
// hono-rate-limiter's options, and the library's headers (byte for byte the express
// middleware's for the same limit), through `requestDecider`, which any framework can use.

const test = require('node:test');
const assert = require('node:assert/strict');
const { Hono } = require('hono');
const { serve } = require('@hono/node-server');
const express = require('express');
const { rateLimiter } = require('sluicegate/hono');
const { rateLimit, requestDecider } = require('sluicegate');
const { expressApp, listen, get, rateLimitHeaders } = require('./support/apps');

/** Serves a hono app with `middleware` in front of GET / answering 'ok' (and the request's
 * rate-limit info under /info), for `fn(server)`. */
async function serving(middleware, fn) {
  const app = new Hono();
  app.use(middleware);
  app.get('/', (c) => c.text('ok'));
  app.get('/info', (c) => c.json(c.get('rateLimit') ?? null));
  const server = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve({ s, port: info.port }));
  });
  try {
    await fn({ url: `http://127.0.0.1:${server.port}` });
  } finally {
    server.s.closeAllConnections?.();
    await new Promise((resolve) => server.s.close(resolve));
  }
}

test('the same limit sends the same headers and body as the express middleware', async () => {
  const options = { windowMs: 60_000, limit: 2 };
  const viaExpress = await listen(expressApp(express, rateLimit(options)));
  try {
    await serving(rateLimiter(options), async ({ url }) => {
      for (let i = 0; i < 3; i++) {
        const [h, e] = [await get(url), await get(viaExpress.url)];
        assert.equal(h.status, e.status, `request ${i + 1}`);
        const pick = (r) => rateLimitHeaders(r).filter(([name]) => name.toLowerCase() !== 'x-ratelimit-reset').map(([n, v]) => [n.toLowerCase(), v]);
        assert.deepEqual(pick(h), pick(e), `request ${i + 1}`);
        if (h.status === 429) assert.equal(h.body, e.body);
      }
    });
  } finally {
    await viaExpress.close();
  }
});

test('keyGenerator(c), standardHeaders, message, and c.get("rateLimit")', async () => {
  const limiter = rateLimiter({ windowMs: 60_000, limit: 1, standardHeaders: 'draft-7', legacyHeaders: false, keyGenerator: (c) => c.req.header('x-user'), message: { error: 'slow down' } });
  await serving(limiter, async ({ url }) => {
    const info = await get(url, '/info', { 'x-user': 'a' });
    assert.equal(info.status, 200);
    assert.equal(info.headers.ratelimit, 'limit=1, remaining=0, reset=60');
    assert.equal(info.headers['x-ratelimit-limit'], undefined);
    const body = JSON.parse(info.body);
    assert.equal(body.key, 'a');
    assert.equal(body.limit, 1);
    const refused = await get(url, '/', { 'x-user': 'a' });
    assert.equal(refused.status, 429);
    assert.deepEqual(JSON.parse(refused.body), { error: 'slow down' });
    assert.equal(refused.headers['retry-after'], '60');
    assert.equal((await get(url, '/', { 'x-user': 'b' })).status, 200);
  });
});

test('handler answers a refusal; skip passes uncounted; X-Forwarded-For only through trustedProxies', async () => {
  const limiter = rateLimiter({
    windowMs: 60_000,
    limit: 1,
    skip: (c) => c.req.header('x-skip') === 'yes',
    handler: (c, next, options) => c.json({ refused: options.message }, options.statusCode),
  });
  await serving(limiter, async ({ url }) => {
    for (let i = 0; i < 2; i++) assert.equal((await get(url, '/', { 'x-skip': 'yes' })).status, 200);
    assert.equal((await get(url, '/', { 'x-forwarded-for': '203.0.113.1' })).status, 200);
    const refused = await get(url, '/', { 'x-forwarded-for': '203.0.113.2' });
    assert.equal(refused.status, 429);
    assert.deepEqual(JSON.parse(refused.body), { refused: 'too many requests for limit "ip"; retry after 60 seconds' });
  });
  await serving(rateLimiter({ windowMs: 60_000, limit: 1, trustedProxies: ['127.0.0.1'] }), async ({ url }) => {
    assert.equal((await get(url, '/', { 'x-forwarded-for': '203.0.113.1' })).status, 200);
    assert.equal((await get(url, '/', { 'x-forwarded-for': '203.0.113.2' })).status, 200);
    assert.equal((await get(url, '/', { 'x-forwarded-for': '203.0.113.1' })).status, 429);
  });
});

test('requestDecider: the library\'s verdict and headers for a request described by plain values', async () => {
  const decideRequest = requestDecider({ quota: '2/minute', name: 'api' });
  const request = { method: 'GET', url: '/items', headers: new Headers({ 'user-agent': 't' }), remoteAddress: '192.0.2.7', remotePort: 4000 };
  const first = await decideRequest(request);
  assert.equal(first.status, 0);
  assert.equal(first.body, null);
  assert.deepEqual(first.headers, [['ratelimit-policy', '"api";q=2;w=60'], ['ratelimit', '"api";r=1;t=30'], ['x-ratelimit-limit', '2'], ['x-ratelimit-remaining', '1'], ['x-ratelimit-reset', first.headers[4][1]]]);
  assert.equal(first.rateLimit.key, '192.0.2.7');
  await decideRequest(request);
  const refused = await decideRequest(request);
  assert.equal(refused.status, 429);
  assert.match(refused.body, /^too many requests for limit "api"; retry after \d+ seconds?\n$/);
  assert.ok(refused.headers.some(([name]) => name === 'retry-after'));
  // Another client, and a Unix socket's peer (no address), are counted apart.
  assert.equal((await decideRequest({ ...request, remoteAddress: '192.0.2.8' })).status, 0);
  assert.equal((await decideRequest({ url: '/' })).rateLimit.key, 'unix');
  assert.throws(() => requestDecider({ handler: () => {} }), /`handler` is the caller's to do/);
});

test("getConnInfo gives the peer's address off @hono/node-server (another runtime's helper)", async () => {
  const getConnInfo = (c) => ({ remote: { address: c.req.header('x-test-peer'), port: 1234 } });
  await serving(rateLimiter({ windowMs: 60_000, limit: 1, getConnInfo }), async ({ url }) => {
    const info = await get(url, '/info', { 'x-test-peer': '192.0.2.10' });
    assert.equal(JSON.parse(info.body).key, '192.0.2.10');
    assert.equal((await get(url, '/', { 'x-test-peer': '192.0.2.10' })).status, 429);
    assert.equal((await get(url, '/', { 'x-test-peer': '192.0.2.11' })).status, 200);
  });
});

test("hono-rate-limiter's store option, and unknown ones, are refused", () => {
  assert.throws(() => rateLimiter({ store: {} }), /`store` \(hono-rate-limiter\) has no counterpart/);
  assert.throws(() => rateLimiter({ windowMS: 1000 }), /windowMS/);
});
