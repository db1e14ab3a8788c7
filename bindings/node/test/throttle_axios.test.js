'use strict';
// throttle() as axios-rate-limit's users know it, with real axios against a real HTTP server
// on 127.0.0.1: its options as they are (an exact sliding log: never more than N requests in
// any P ms), getMaxRPS / setMaxRPS / setRateLimitOptions / getQueue, the queue's bounds, and
// unknown options refused.

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const axios = require('axios');
const { throttle } = require('..');
const { serve } = require('./support/http');

// The engine's clock (the TSC) and performance.now() are two clocks: a margin of 1 ms.
const EARLY = 1;

/** A throttled axios instance whose `sent` records when each request leaves the throttle. */
function client(server, options) {
  const instance = axios.create({ baseURL: server?.url, httpAgent: new http.Agent({ keepAlive: false }) });
  const sent = [];
  instance.interceptors.request.use((c) => {
    sent.push(performance.now());
    return c;
  });
  const api = throttle(instance, options);
  api.sent = sent;
  return api;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('{ maxRequests, perMilliseconds }: never more than N requests in any P ms', async () => {
  const server = await serve();
  try {
    const api = client(server, { maxRequests: 3, perMilliseconds: 300 });
    // axios's first request loads its adapter, which would make its send time look late.
    await api.get('/warm');
    await sleep(310);
    server.arrivals.length = 0;
    api.sent.length = 0;
    const start = performance.now();
    await Promise.all(Array.from({ length: 9 }, (_, i) => api.get(`/${i}`)));
    assert.equal(server.arrivals.length, 9);
    const at = api.sent;
    // The first 3 go at once (no GCRA spacing), then each waits for the oldest of the last 3.
    assert.ok(at[2] - start < 100, `the first 3 took ${(at[2] - start).toFixed(1)} ms`);
    // Each batch of 3 waits for the one before it to leave the window: request i never
    // leaves before floor(i / 3) * 300 ms (send times are taken after the admission, so a
    // late measurement never makes a request look early).
    for (let i = 3; i < at.length; i++) {
      const slot = Math.floor(i / 3) * 300;
      assert.ok(at[i] - start >= slot - EARLY, `request ${i} left at ${(at[i] - start).toFixed(1)} ms, before its slot at ${slot} ms`);
    }
    assert.ok(at[8] - start < 600 + 200, `9 requests took ${(at[8] - start).toFixed(1)} ms, long after their slots (600 ms)`);
  } finally {
    await server.close();
  }
});

test('{ maxRPS } and getMaxRPS(): 5 requests in the first second, not 9', async () => {
  const server = await serve();
  try {
    const api = client(server, { maxRPS: 5 });
    assert.equal(api.getMaxRPS(), 5);
    const start = performance.now();
    const all = Promise.all(Array.from({ length: 6 }, (_, i) => api.get(`/${i}`)));
    await sleep(500);
    assert.equal(server.arrivals.length, 5, 'the first 5 go at once');
    assert.equal(api.getQueue().length, 1, 'the 6th waits');
    await all;
    assert.ok(api.sent[5] - start >= 1000 - EARLY, `the 6th left at ${(api.sent[5] - start).toFixed(1)} ms`);
    assert.equal(client(null, { maxRequests: 2, perMilliseconds: 100 }).getMaxRPS(), 20);
    assert.equal(client(null, { maxRequests: 3, duration: '1s' }).getMaxRPS(), 3);
    assert.equal(client(null, { quota: '120/minute' }).getMaxRPS(), 2);
  } finally {
    await server.close();
  }
});

test('setRateLimitOptions and setMaxRPS change the quota at run time, waiting requests included', async () => {
  const server = await serve();
  try {
    const api = client(server, { maxRequests: 1, perMilliseconds: 1000 });
    const all = Promise.all([api.get('/0'), api.get('/1'), api.get('/2')]);
    await sleep(100);
    assert.equal(server.arrivals.length, 1);
    assert.equal(api.getQueue().length, 2);
    // The request sent counts under the new quota: 2 more in this second, at once.
    api.setRateLimitOptions({ maxRequests: 3, perMilliseconds: 1000 });
    assert.equal(api.getMaxRPS(), 3);
    await sleep(100);
    assert.equal(server.arrivals.length, 3, 'the waiting requests went when the quota grew');
    await all;
    api.setMaxRPS(10);
    assert.equal(api.getMaxRPS(), 10);
    api.setRateLimitOptions(null); // as axios-rate-limit: nothing changes
    assert.equal(api.getMaxRPS(), 10);
    assert.throws(() => api.setRateLimitOptions({}), (e) => e instanceof RangeError && /Invalid rate limit options/.test(e.message));
    assert.throws(() => api.setRateLimitOptions({ maxRequests: 1, perMilliseconds: 1000, algorithm: 'gcra' }), /build a new throttle to change the algorithm/);
    assert.equal(api.getMaxRPS(), 10, 'a refused change leaves the quota');
  } finally {
    await server.close();
  }
});

test('the queue is bounded: maxQueue rejects at once, maxWait rejects what cannot go in time', async () => {
  const server = await serve();
  try {
    const full = client(server, { maxRequests: 1, perMilliseconds: 1000, maxQueue: 1 });
    const controller = new AbortController();
    await full.get('/first');
    const waiting = full.get('/second', { signal: controller.signal }).catch((e) => e);
    await assert.rejects(full.get('/third'), (e) => e.code === 'ERR_SLUICEGATE_QUEUE_FULL' && /maxQueue: 1/.test(e.message));
    controller.abort();
    assert.equal((await waiting).name, 'AbortError');

    const late = client(server, { maxRequests: 1, perMilliseconds: 1000, maxWait: 200 });
    await late.get('/a');
    const before = performance.now();
    await assert.rejects(late.get('/b'), (e) => e.code === 'ERR_SLUICEGATE_QUEUE_TIMEOUT');
    assert.ok(performance.now() - before < 150, 'the engine said it could not go within 200 ms: rejected at once');
    assert.deepEqual(server.arrivals.map((a) => a.path), ['/first', '/a']);
    assert.equal(late.getQueue().length, 0);
  } finally {
    await server.close();
  }
});

test('axios-rate-limit options with no counterpart, and unknown ones, are TypeErrors', () => {
  const api = axios.create();
  for (const [options, pattern] of [
    [{ maxRPS: 1, shouldCountRequest: () => true }, /`shouldCountRequest` is not supported/],
    [{ maxrps: 1 }, /unknown option `maxrps`; did you mean `maxRPS`\?/],
    [{ quota: '1/s', maxQueu: 3 }, /unknown option `maxQueu`/],
  ]) {
    assert.throws(() => throttle(api, options), (e) => e instanceof TypeError && pattern.test(e.message) && e.code.startsWith('ERR_SLUICEGATE_'));
  }
  assert.throws(() => throttle(api, { maxRPS: 1, queue: {} }), { name: 'TypeError', message: /`queue` must have `push` and `shift` functions, and a `length` or a `getLength\(\)`/ });
  assert.throws(() => throttle(api, { maxRPS: 1, queue: [], maxQueue: 2 }), { name: 'TypeError', message: /with your own `queue`, bound it there/ });
  assert.throws(() => throttle(api, { maxRPS: 1, queue: [], key: (c) => c.url }), { name: 'TypeError', message: /one line of requests: it cannot be combined with a limit's `key`/ });
  assert.throws(() => throttle(api, { rateLimiter: {} }), { name: 'TypeError', message: /`rateLimiter` must be a limiter from throttle.getLimiter/ });
  assert.throws(() => throttle(api, { rateLimiter: throttle.getLimiter({ maxRPS: 1 }), maxRPS: 2 }), { name: 'TypeError', message: /leave out `maxRPS`/ });
  // axios-rate-limit's own sentences, which its users match.
  assert.throws(() => throttle(api, {}), /Invalid rate limit options/);
  assert.throws(() => throttle(api, { maxRequests: 5 }), /one of maxRPS, duration, or perMilliseconds is required/);
  assert.throws(() => throttle(api, { perMilliseconds: 1000 }), /maxRequests is required and must be a positive number/);
  assert.throws(() => throttle(api, { maxRequests: 0, perMilliseconds: 1000 }), RangeError);
  assert.throws(() => throttle(api, { maxRequests: 2, duration: '1 fortnight' }), /Unrecognized duration: '1 fortnight'/);
});

test('on Redis the quota is part of the keys: setRateLimitOptions is a TypeError', () => {
  // The gate connects at the first request: nothing here reaches a Redis.
  const api = throttle(axios.create(), { maxRPS: 2, redis: 'redis://127.0.0.1:1/' });
  assert.equal(api.getMaxRPS(), 2);
  assert.throws(() => api.setMaxRPS(3), (e) => e instanceof TypeError && /cannot change at run time/.test(e.message));
});
