'use strict';
// throttle's axios-rate-limit forms beyond one instance and its own queue, with real axios
// against a real HTTP server on 127.0.0.1: one limiter (`throttle.getLimiter`) shared by
// several instances, your own queue (push/shift/length, or asynchronous with getLength()),
// no options at all (no limit), and new limits of another number at run time.

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const axios = require('axios');
const { throttle } = require('..');
const { serve } = require('./support/http');

const instance = (server) => axios.create({ baseURL: server.url, httpAgent: new http.Agent({ keepAlive: false }) });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('one limiter from getLimiter paces every instance it is enabled on, as one limit', async () => {
  const server = await serve();
  try {
    const limiter = throttle.getLimiter({ maxRequests: 2, perMilliseconds: 300 });
    const a = limiter.enable(instance(server));
    const b = throttle(instance(server), { rateLimiter: limiter });
    const start = performance.now();
    const done = [];
    await Promise.all(['/a1', '/a2'].map((p) => a.get(p).then(() => done.push([p, performance.now() - start]))).concat(
      ['/b1', '/b2'].map((p) => b.get(p).then(() => done.push([p, performance.now() - start])))));
    const late = done.filter(([, at]) => at >= 300 - 1).map(([p]) => p).sort();
    assert.deepEqual(late, ['/b1', '/b2'], `two went at once, two a window later: ${JSON.stringify(done)}`);
    assert.equal(a.getMaxRPS(), b.getMaxRPS());
    b.setMaxRPS(10);
    assert.equal(a.getMaxRPS(), 10, 'a change through one instance is the shared limit\'s');
  } finally {
    await server.close();
  }
});

test('your own queue: synchronous (length) and asynchronous (getLength(), Promises) alike', async () => {
  const server = await serve();
  try {
    const backing = [];
    const sync = { push: (e) => backing.push(e), shift: () => backing.shift(), get length() { return backing.length; } };
    const asyncBacking = [];
    const pushed = [];
    const asyncQueue = {
      push: (e) => sleep(1).then(() => { pushed.push(e); asyncBacking.push(e); }),
      shift: () => sleep(1).then(() => asyncBacking.shift()),
      getLength: () => Promise.resolve(asyncBacking.length),
    };
    for (const [queue, length] of [[sync, () => backing.length], [asyncQueue, () => asyncBacking.length]]) {
      const api = throttle(instance(server), { maxRequests: 1, perMilliseconds: 150, queue });
      assert.equal(api.getQueue(), queue);
      let done = 0;
      const all = [api.get('/1'), api.get('/2'), api.get('/3')].map((p) => p.then(() => done++));
      await sleep(60);
      assert.equal(done, 1);
      assert.equal(length(), 2, 'the two waiting stand in your queue');
      await Promise.all(all);
      assert.equal(done, 3);
      assert.equal(length(), 0);
    }
    assert.equal(pushed.length, 3, 'every request stood in the queue, its asynchronous push awaited');
  } finally {
    await server.close();
  }
});

test('a request aborted while in your queue is skipped, and rejects with its reason', async () => {
  const server = await serve();
  try {
    const queue = [];
    const api = throttle(instance(server), { maxRequests: 1, perMilliseconds: 200, queue });
    await api.get('/first');
    const controller = new AbortController();
    const reason = new Error('gone');
    const aborted = api.get('/aborted', { signal: controller.signal });
    const next = api.get('/next');
    await sleep(20);
    controller.abort(reason);
    await assert.rejects(aborted, (e) => e === reason);
    await next;
    assert.deepEqual(server.arrivals.map((a) => a.path), ['/first', '/next']);
  } finally {
    await server.close();
  }
});

test('no options: no limit, as axios-rate-limit; setRateLimitOptions then gives one, of any number of limits', async () => {
  const server = await serve();
  try {
    const api = throttle(instance(server));
    assert.equal(api.getMaxRPS(), 0);
    await Promise.all([1, 2, 3, 4].map((i) => api.get(`/${i}`)));
    assert.deepEqual(api.getQueue(), []);
    api.setRateLimitOptions({ limits: [{ maxRequests: 1, duration: '1s' }, { maxRequests: 5, duration: '1m' }] });
    assert.equal(api.getMaxRPS(), 1);
    await api.get('/limited');
    const waiting = api.get('/waits');
    await sleep(20);
    assert.equal(api.getQueue().length, 1);
    // One limit instead of two: new limits, starting afresh; the waiting request goes.
    api.setRateLimitOptions({ maxRequests: 5, perMilliseconds: 1000 });
    await waiting;
    assert.equal(api.getMaxRPS(), 5);
  } finally {
    await server.close();
  }
});
