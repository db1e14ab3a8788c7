'use strict';
// One limit on Redis shared by the framework adapters and the express middleware, and by
// fastify and a Rust process (the `http_server` example's tower layer): the same name, quota
// and client address are one counter (`sluicegate:http:<name>:`), whichever front end
// decides (a real redis-server on a free port, real servers on 127.0.0.1).

const test = require('node:test');
const assert = require('node:assert/strict');
const Fastify = require('fastify');
const Koa = require('koa');
const express = require('express');
const sluicegateFastify = require('sluicegate/fastify');
const koaRateLimit = require('sluicegate/koa');
const { rateLimit } = require('sluicegate');
const { expressApp, listen, get } = require('./support/apps');
const { startRedis } = require('./support/redis');
const { startHttpServer } = require('./support/servers');

let redis;
test.before(async () => {
  redis = await startRedis();
});
test.after(async () => {
  await redis?.stop();
});

test('fastify, koa and express count one client on one Redis limit', async () => {
  const name = 'shared-login';
  const viaExpress = await listen(expressApp(express, rateLimit({ name, windowMs: 60_000, limit: 4, redis: redis.url })));
  const koa = new Koa();
  koa.use(koaRateLimit({ name, duration: 60_000, max: 4, redis: redis.url }));
  koa.use((ctx) => {
    ctx.body = 'ok';
  });
  const viaKoa = await listen(koa.callback());
  const fastify = Fastify();
  await fastify.register(sluicegateFastify, { name, max: 4, timeWindow: 60_000, redis: redis.url });
  fastify.get('/', async () => 'ok');
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  const viaFastify = `http://127.0.0.1:${fastify.server.address().port}`;
  try {
    const a = await get(viaFastify);
    assert.equal(a.status, 200);
    assert.equal(a.headers['x-ratelimit-remaining'], '3');
    const b = await get(viaExpress.url);
    assert.equal(b.status, 200);
    assert.equal(b.headers['x-ratelimit-remaining'], '2', 'express sees the request fastify counted');
    const c = await get(viaKoa.url);
    assert.equal(c.status, 200);
    assert.equal(c.headers['x-ratelimit-remaining'], '1', 'koa sees both');
    assert.equal((await get(viaFastify)).status, 200);
    for (const url of [viaFastify, viaExpress.url, viaKoa.url]) {
      const refused = await get(url);
      assert.equal(refused.status, 429, url);
      assert.ok(Number(refused.headers['retry-after']) > 0);
    }
  } finally {
    await fastify.close();
    await viaKoa.close();
    await viaExpress.close();
  }
});

test('fastify and a Rust process count one client on one Redis limit', async () => {
  const name = 'shared-with-rust';
  const rust = await startHttpServer(['--limit', `name=${name}; key=peer-ip; quota=4/minute; algorithm=gcra`, '--redis', redis.url]);
  const fastify = Fastify();
  try {
    await fastify.register(sluicegateFastify, { name, quota: '4/minute', algorithm: 'gcra', redis: redis.url });
    fastify.get('/', async () => 'ok');
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    const viaFastify = `http://127.0.0.1:${fastify.server.address().port}`;
    // http_server connects lazily and lets requests through uncounted until it has found
    // Redis: wait for its RateLimit header, asking from another client (another key).
    const deadline = Date.now() + 10_000;
    while ((await get(rust.url, '/', {}, '127.0.0.99')).headers.ratelimit === undefined) {
      assert.ok(Date.now() < deadline, 'http_server never decided on Redis');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const statuses = [];
    const remaining = [];
    for (const url of [viaFastify, rust.url, viaFastify, rust.url, rust.url, viaFastify]) {
      const answer = await get(url);
      statuses.push(answer.status);
      // fastify's answer in @fastify/rate-limit's header, http_server's in RateLimit.
      remaining.push(url === viaFastify ? answer.headers['x-ratelimit-remaining'] : answer.headers.ratelimit?.match(/r=(\d+)/)?.[1]);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
    assert.deepEqual(remaining.slice(0, 4), ['3', '2', '1', '0'], 'each sees the requests the other counted');
  } finally {
    await fastify.close();
    await rust.stop();
  }
});
