'use strict';
// Redis over TLS and through Sentinel, on real servers: rateLimit's `redis` as an object
// `{ url, caCert, clientCert, clientKey }` (verified against the CA given; mutual TLS), a
// wrong CA or a missing client certificate reported as a backend error (never a silent pass),
// a PEM option the library cannot read named in the error, RedisLimiter and throttle with
// the same options (a Buffer as ioredis users pass it), and a `redis-sentinel://` URL.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const express = require('express');
const { rateLimit, RedisLimiter } = require('..');
const { expressApp, listen, get } = require('./support/apps');
const { startRedis } = require('./support/redis');
const { makeTlsFiles, startTlsRedis, startSentinel } = require('./support/tls');

let files;
test.before(() => {
  files = makeTlsFiles();
});
test.after(() => files?.remove());

/** Serves `limiter` for the time of `fn(url)`. */
async function serving(limiter, fn) {
  const server = await listen(expressApp(express, limiter));
  try {
    await fn(server.url);
  } finally {
    await server.close();
  }
}

/** `limiter`'s statuses for three GETs, and the backend errors it reported meanwhile. */
async function threeGets(limiter) {
  const failures = [];
  limiter.on('backendError', (event) => failures.push(event));
  const statuses = [];
  await serving(limiter, async (url) => {
    for (let i = 0; i < 3; i++) statuses.push((await get(url)).status);
  });
  return { statuses, failures };
}

test('rediss:// verified against caCert (a path): limited on that Redis, 200, 200, 429', async () => {
  const redis = await startTlsRedis(files, false);
  try {
    const limiter = rateLimit({ limits: [{ name: 'tls', quota: '2/minute' }], redis: { url: redis.url, caCert: files.path('ca.crt') } });
    assert.equal(redis.cli(['KEYS', 'sluicegate:http:tls:*']), '');
    const { statuses, failures } = await threeGets(limiter);
    assert.deepEqual(statuses, [200, 200, 429]);
    assert.deepEqual(failures, []);
    assert.equal(limiter.backendErrors, 0);
    assert.match(redis.cli(['KEYS', 'sluicegate:http:tls:*']), /^sluicegate:http:tls:/, 'the counter is on the TLS Redis');
    const other = rateLimit({ limits: [{ name: 'tls', quota: '2/minute' }], redis: { url: redis.url, caCert: files.path('ca.crt') } });
    const shared = await threeGets(other);
    assert.deepEqual(shared.statuses, [429, 429, 429], 'a second limiter of that name reads the same counter on that Redis');
  } finally {
    await redis.stop();
  }
});

test('rediss:// with the wrong CA fails as a backend error, reported, not decided', async () => {
  const redis = await startTlsRedis(files, false);
  try {
    const limiter = rateLimit({ limits: [{ name: 'wrong-ca', quota: '2/minute' }], redis: { url: redis.url, caCert: fs.readFileSync(files.path('other-ca.crt')) }, logger: { warn() {}, error() {} } });
    const { statuses, failures } = await threeGets(limiter);
    assert.deepEqual(statuses, [200, 200, 200], "onBackendError 'allow' lets them through uncounted");
    assert.equal(limiter.backendErrors, 3);
    assert.equal(failures.length, 3);
    assert.equal(redis.cli(['KEYS', 'sluicegate:http:wrong-ca:*']), '');
  } finally {
    await redis.stop();
  }
});

test('mutual TLS: with clientCert and clientKey (PEM text) decided on Redis; without them refused by Redis', async () => {
  const redis = await startTlsRedis(files, true);
  try {
    const pem = (name) => fs.readFileSync(files.path(name), 'utf8');
    const mutual = rateLimit({
      limits: [{ name: 'mtls', quota: '2/minute' }],
      redis: { url: redis.url, caCert: pem('ca.crt'), clientCert: pem('client.crt'), clientKey: pem('client.key') },
    });
    const shown = await threeGets(mutual);
    assert.deepEqual(shown.statuses, [200, 200, 429]);
    assert.equal(mutual.backendErrors, 0);

    const anonymous = rateLimit({ limits: [{ name: 'anonymous', quota: '2/minute' }], redis: { url: redis.url, caCert: files.path('ca.crt') }, onBackendError: 'deny', logger: { warn() {}, error() {} } });
    const refused = await threeGets(anonymous);
    assert.deepEqual(refused.statuses, [503, 503, 503]);
    assert.equal(anonymous.backendErrors, 3);
    assert.equal(refused.failures.length, 3);
  } finally {
    await redis.stop();
  }
});

test('a PEM option that is neither PEM nor a readable file is named in the error', () => {
  assert.throws(
    () => rateLimit({ limits: [{ name: 'pem', quota: '2/minute' }], redis: { url: 'rediss://127.0.0.1:1/', clientCert: files.path('client.crt'), clientKey: '/nonexistent/client.key' } }),
    /redis\.client_key: "\/nonexistent\/client\.key" is neither PEM text/,
  );
  assert.throws(() => rateLimit({ quota: '2/minute', redis: { url: 'rediss://127.0.0.1:1/', cacert: 'x' } }), /unknown option `cacert`; did you mean `caCert`\?/);
  assert.throws(() => rateLimit({ quota: '2/minute', redis: { url: 'rediss://127.0.0.1:1/', caCert: 42 } }), /`redis.caCert` must be a PEM file's path, the PEM text or a Buffer/);
});

test('RedisLimiter and throttle take the same options: caCert as a Buffer, mutual TLS', async () => {
  const redis = await startTlsRedis(files, true);
  try {
    const tls = { caCert: fs.readFileSync(files.path('ca.crt')), clientCert: fs.readFileSync(files.path('client.crt')), clientKey: fs.readFileSync(files.path('client.key')) };
    const limiter = await RedisLimiter.connect({ quota: '2/minute', url: redis.url, prefix: 'sluicegate:tls-limiter:', ...tls });
    try {
      const allowed = [];
      for (let i = 0; i < 3; i++) allowed.push((await limiter.check('k')).allowed);
      assert.deepEqual(allowed, [true, true, false]);
    } finally {
      limiter.close();
    }
    assert.match(redis.cli(['KEYS', 'sluicegate:tls-limiter:*']), /^sluicegate:tls-limiter:/);
    await assert.rejects(RedisLimiter.connect({ quota: '2/minute', url: redis.url, caCert: tls.caCert, connectTimeout: 2000 }), 'no client certificate: Redis refuses the connection');
    await assert.rejects(RedisLimiter.connect({ quota: '2/minute', url: redis.url, clientKey: '/nonexistent/key' }), /redis\.client_key: "\/nonexistent\/key" is neither PEM text/);

    const { throttle } = require('..');
    const { serve } = require('./support/http');
    const axios = require('axios');
    const server = await serve();
    try {
      const client = throttle(axios.create(), { quota: '2/minute', redis: { url: redis.url, ...tls }, prefix: 'sluicegate:tls-axios:', maxRetries: 0, maxWait: 50 });
      await client.get(`${server.url}/a`);
      await client.get(`${server.url}/b`);
      assert.equal(server.arrivals.length, 2);
      assert.match(redis.cli(['KEYS', 'sluicegate:tls-axios:*']), /^sluicegate:tls-axios:/, 'the throttle counted on the TLS Redis');
    } finally {
      await server.close();
    }
  } finally {
    await redis.stop();
  }
});

test('redis-sentinel://: the master the Sentinel names decides, 200, 200, 429', async () => {
  const redis = await startRedis();
  let sentinel;
  try {
    sentinel = await startSentinel(redis, 'mymaster');
    const limiter = rateLimit({ limits: [{ name: 'sentinel', quota: '2/minute' }], redis: `redis-sentinel://127.0.0.1:${sentinel.port}/#mymaster` });
    const { statuses, failures } = await threeGets(limiter);
    assert.deepEqual(statuses, [200, 200, 429]);
    assert.deepEqual(failures, []);
    const { spawnSync } = require('node:child_process');
    const keys = spawnSync('redis-cli', ['-p', String(redis.port), 'KEYS', 'sluicegate:http:sentinel:*'], { encoding: 'utf8' }).stdout;
    assert.match(keys, /^sluicegate:http:sentinel:/, 'the counter is on the master');
  } finally {
    await sentinel?.stop();
    await redis.stop();
  }
});
