'use strict';
// A Redis that cannot answer is reported as the Python package reports it: a warning on the
// `logger` at most every 10 seconds while requests fail, and once when Redis decides again;
// the `backendError` and `backendRecovered` events; the library's counters
// (`backendErrors`, `backendFallbacks`, `backendAvailable`); and `onBackendError` as in
// Python: 'allow', 'deny', or 'local' (decided in this process meanwhile). Real express 5, a
// real redis-server started on the port the middleware was given once requests have failed.

const test = require('node:test');
const assert = require('node:assert/strict');
const express = require('express');
const { rateLimit } = require('..');
const { expressApp, listen, get } = require('./support/apps');
const { startRedis, freePort } = require('./support/redis');

/** A logger that keeps what it is told. */
function recorder() {
  const lines = [];
  return { lines, warn: (line) => lines.push(line), error: (line) => lines.push(`error: ${line}`) };
}

/** Serves `middleware` for the time of `fn(server)`. */
async function serving(middleware, fn) {
  const server = await listen(expressApp(express, middleware));
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

test("'allow': requests pass; one warning, events and counters while Redis is down; one line when it decides again", async () => {
  const port = await freePort();
  const logger = recorder();
  const limiter = rateLimit({ limits: [{ name: 'outage', key: 'ip', quota: '5/minute' }], redis: `redis://127.0.0.1:${port}/`, logger });
  const failures = [];
  const recoveries = [];
  limiter.on('backendError', (event) => failures.push(event)).on('backendRecovered', (event) => recoveries.push(event));
  await serving(limiter, async ({ url }) => {
    const answers = [await get(url), await get(url), await get(url)];
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
    assert.equal(answers[0].headers.ratelimit, undefined, 'no limit decided them');
    assert.equal(limiter.backendErrors, 3);
    assert.equal(limiter.backendFallbacks, 0);
    assert.equal(limiter.backendAvailable, false);
    assert.deepEqual(failures.map((e) => e.failed), [1, 1, 1]);
    assert.deepEqual(failures[2], { failed: 1, errors: 3, onBackendError: 'allow', limits: ['outage'] });
    assert.deepEqual(logger.lines, [
      "sluicegate: Redis cannot decide the limits outage: 1 request(s) let through uncounted (onBackendError 'allow'); 1 since the limits were built",
    ], 'one warning: the next at most 10 s later');

    const redis = await startRedis([], port);
    try {
      const deadline = Date.now() + 10_000;
      let decided;
      do {
        await new Promise((resolve) => setTimeout(resolve, 50));
        decided = await get(url);
        assert.ok(Date.now() < deadline, 'Redis never decided once it answered');
      } while (decided.headers.ratelimit === undefined);
      assert.equal(decided.status, 200);
      await get(url); // decided by Redis again: reported once only
      assert.equal(recoveries.length, 1);
      assert.equal(logger.lines.length, 2);
      assert.equal(logger.lines[1], 'sluicegate: Redis decides the limits outage again');
      assert.equal(limiter.backendAvailable, true);
    } finally {
      await redis.stop();
    }
  });
});

test("'deny': a 503 with Retry-After: 1, counted and reported alike", async () => {
  const logger = recorder();
  const limiter = rateLimit({ quota: '5/minute', redis: `redis://127.0.0.1:${await freePort()}/`, onBackendError: 'deny', logger });
  await serving(limiter, async ({ url }) => {
    const refused = await get(url);
    assert.equal(refused.status, 503);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(limiter.backendErrors, 1);
    assert.match(logger.lines[0], /^sluicegate: Redis cannot decide the limits ip: 1 request\(s\) refused with 503 \(onBackendError 'deny'\)/);
  });
});

test("'local': decided in this process while Redis is down, by the same quota, and counted as fallbacks", async () => {
  const logger = recorder();
  const limiter = rateLimit({ quota: '2/minute', algorithm: 'fixed-window', redis: `redis://127.0.0.1:${await freePort()}/`, onBackendError: 'local', logger });
  await serving(limiter, async ({ url }) => {
    const answers = [await get(url), await get(url), await get(url)];
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 429]);
    assert.match(answers[0].headers.ratelimit, /^"ip";r=1;t=\d+$/);
    assert.equal(limiter.backendErrors, 3);
    assert.equal(limiter.backendFallbacks, 3);
    assert.match(logger.lines[0], /1 request\(s\) decided in this process \(onBackendError 'local'\)/);
  });
});

test('in process there is nothing to report', async () => {
  const limiter = rateLimit({ quota: '2/minute', onBackendError: 'local' });
  await serving(limiter, async ({ url }) => {
    assert.equal((await get(url)).status, 200);
    assert.deepEqual([limiter.backendErrors, limiter.backendFallbacks, limiter.backendAvailable], [0, 0, true]);
  });
});
