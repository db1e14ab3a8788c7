'use strict';
// throttle() with real axios against a real HTTP server on 127.0.0.1: pacing, first come
// first served, abort, several limits all-or-nothing, per-host keys, 429 + Retry-After.

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const axios = require('axios');
const { throttle } = require('..');
const { serve } = require('./support/http');

// Send times are taken by an interceptor that runs right after the throttle's (axios runs
// request interceptors last-registered first), after the engine admits the request; they
// are compared with slots counted from a time taken before the first admission, so a late
// measurement never makes a later request look early. The margin covers the engine's clock
// (the TSC) and performance.now() being two clocks.
//
// The throttle waits on real timers (its queue sleeps until the engine's slot), so what it
// promises is measured on the wall clock. Lower bounds (never before a slot) hold however
// loaded the machine is: load only delays. Upper bounds are set halfway between the right
// answer and the nearest wrong one (a request held one slot too long), with slots of 500 ms
// where a test separates two outcomes, so a two-core machine busy compiling keeps them: a
// stall of a quarter second still passes, a request held a whole slot never does.
const EARLY = 1;

/** Sends one request and waits `ms` for its slot to refill, then forgets it: axios's first
 * request loads its adapter and connects, which would skew the first arrival. */
async function warm(api, server, ms) {
  await api.get('/warm');
  await new Promise((resolve) => setTimeout(resolve, ms));
  server.arrivals.length = 0;
  api.sent.length = 0;
}

/** A throttled axios instance whose `sent` records `{ at, url }` as each request leaves the
 * throttle; a fresh agent per test, so that no idle socket outlives it. */
function client(server, options, config = {}) {
  const agent = new http.Agent({ keepAlive: false });
  const instance = axios.create({ baseURL: server?.url, httpAgent: agent, ...config });
  const sent = [];
  instance.interceptors.request.use((c) => {
    sent.push({ at: performance.now(), url: c.url });
    return c;
  });
  const api = throttle(instance, options);
  api.sent = sent;
  return api;
}

test('requests are paced within the quota, as the engine schedules them', async () => {
  const server = await serve();
  try {
    const api = client(server, { quota: '20/second burst 1' });
    await warm(api, server, 60);
    const start = performance.now(); // before the first admission: request i's slot is 50 i ms later
    await Promise.all(Array.from({ length: 8 }, (_, i) => api.get(`/${i}`)));
    assert.equal(server.arrivals.length, 8);
    const at = api.sent.map((s) => s.at - start);
    for (let i = 1; i < at.length; i++) {
      assert.ok(at[i] >= i * 50 - EARLY, `request ${i} left at ${at[i].toFixed(1)} ms, before its slot at ${i * 50} ms`);
    }
    // Had each waited a slot too many, the 8th would leave at 400 ms; twice its wait, 700.
    assert.ok(at[7] < 7 * 50 + 350, `8 requests took ${at[7].toFixed(1)} ms, long after their slots (350 ms)`);
  } finally {
    await server.close();
  }
});

test('a burst goes at once, then the rate holds', async () => {
  const server = await serve();
  try {
    const api = client(server, { quota: '2/second burst 4', algorithm: 'token-bucket' });
    await warm(api, server, 550);
    const start = performance.now();
    await Promise.all(Array.from({ length: 6 }, (_, i) => api.get(`/${i}`)));
    const at = api.sent.map((s) => s.at - start);
    // At once: the 4th leaves at ~0 ms; a burst of 3 would send it at its 500 ms slot.
    assert.ok(at[3] < 250, `the burst of 4 went at once (the 4th at ${at[3].toFixed(1)} ms)`);
    assert.ok(at[4] >= 500 - EARLY && at[5] >= 1000 - EARLY, `then one per 500 ms: ${at[4].toFixed(1)}, ${at[5].toFixed(1)}`);
    assert.ok(at[4] < 750, `the 5th left at its slot, not one later (${at[4].toFixed(1)} ms)`);
  } finally {
    await server.close();
  }
});

test('first come, first served on one key', async () => {
  const server = await serve();
  try {
    const api = client(server, { quota: '50/second burst 2' });
    await Promise.all(Array.from({ length: 12 }, (_, i) => api.get(`/${i}`)));
    assert.deepEqual(
      server.arrivals.map((a) => a.path),
      Array.from({ length: 12 }, (_, i) => `/${i}`),
    );
  } finally {
    await server.close();
  }
});

test('an aborted waiting request rejects with its signal\'s reason (an Error), as axios-rate-limit, and consumes nothing', async () => {
  const server = await serve();
  try {
    const api = client(server, { quota: '2/second burst 1' });
    await warm(api, server, 550);
    const start = performance.now(); // before the first request's admission
    await api.get('/first');
    const controller = new AbortController();
    const aborted = api.get('/aborted', { signal: controller.signal });
    const next = api.get('/next');
    const reason = new Error('the user went away');
    setTimeout(() => controller.abort(reason), 20); // long before the aborted one's slot at 500 ms
    await assert.rejects(aborted, (e) => e === reason);
    await next;
    assert.deepEqual(server.arrivals.map((a) => a.path), ['/first', '/next']);
    const gap = api.sent.find((s) => s.url === '/next').at - start;
    assert.ok(gap >= 500 - EARLY && gap < 750, `the next request took the aborted one's slot (${gap.toFixed(1)} ms; 1000 had the aborted one consumed it)`);
    // abort() with no reason: the signal's own AbortError.
    const early = new AbortController();
    early.abort();
    await assert.rejects(api.get('/never', { signal: early.signal }), (e) => e instanceof Error && e.name === 'AbortError');
    // A reason that is not an Error (a string): axios's own CanceledError, as for a CancelToken.
    const worded = new AbortController();
    worded.abort('no longer needed');
    await assert.rejects(api.get('/never', { signal: worded.signal }), (e) => axios.isCancel(e) && e.code === 'ERR_CANCELED');
    const token = axios.CancelToken.source();
    token.cancel('cancelled');
    await assert.rejects(api.get('/never', { cancelToken: token.token }), (e) => axios.isCancel(e));
    assert.equal(server.arrivals.length, 2);
  } finally {
    await server.close();
  }
});

test('several limits decide all-or-nothing: a denied request consumes none of them', async () => {
  const server = await serve();
  try {
    const api = client(server, {
      limits: [
        { quota: '1/second', key: (config) => config.headers['x-user'] },
        { quota: '3/second burst 3', key: () => 'everyone' },
      ],
    });
    const as = (user) => api.get(`/${user}`, { headers: { 'x-user': user } });
    const start = performance.now();
    await as('alice');
    const second = as('alice'); // denied by alice's limit: must not take one of the 3
    const others = [as('bob'), as('carol')];
    await Promise.all(others);
    const at = Object.fromEntries(server.arrivals.map((a) => [a.path, a.at - start]));
    // At once: ~0 ms; behind alice's denied request, 1000 ms.
    assert.ok(at['/carol'] < 500, `bob and carol went at once (carol at ${at['/carol'].toFixed(1)} ms)`);
    await second;
    const aliceAgain = server.arrivals.find((a, i) => a.path === '/alice' && i > 0).at - start;
    assert.ok(aliceAgain >= 1000 - EARLY - 5, `alice's second request waited for her limit (${aliceAgain.toFixed(1)} ms)`);
  } finally {
    await server.close();
  }
});

test('a key per host: one host waiting does not hold back another', async () => {
  const [a, b] = [await serve(), await serve()];
  try {
    const agent = new http.Agent({ keepAlive: false });
    const api = throttle(axios.create({ httpAgent: agent }), {
      quota: '2/second burst 1',
      key: (config) => new URL(config.url, config.baseURL).host,
    });
    const start = performance.now();
    await Promise.all([api.get(`${a.url}/1`), api.get(`${b.url}/1`)]);
    const waiting = api.get(`${a.url}/2`);
    const bSecond = await api.get(`${b.url}/x`); // b's second waits 500 ms too, on b's own key
    assert.equal(bSecond.status, 200);
    assert.equal(bSecond.data, 'ok');
    await waiting;
    assert.deepEqual(a.arrivals.map((r) => r.path), ['/1', '/2']);
    assert.deepEqual(b.arrivals.map((r) => r.path), ['/1', '/x']);
    // At once: ~0 ms; had one host's first waited behind the other's, 500 ms.
    assert.ok(a.arrivals[0].at - start < 250 && b.arrivals[0].at - start < 250, 'both hosts got their first request at once');
    const aSecond = a.arrivals[1].at - start; // its first was admitted after `start`
    assert.ok(aSecond >= 500 - EARLY, `host a's second request waited for a's slot (${aSecond.toFixed(1)} ms)`);
    // Measured from `start` as a's is: the gap between b's two arrivals would also subtract
    // the first request's connection time, which a loaded machine makes several ms.
    const bSecondAt = b.arrivals[1].at - start;
    assert.ok(bSecondAt >= 500 - EARLY, `host b's second request waited for b's own slot (${bSecondAt.toFixed(1)} ms)`);
    // Behind a's second (one key for both hosts) it would have come at 1000 ms.
    assert.ok(bSecondAt < 750, `host b's second request was not held behind host a's (${bSecondAt.toFixed(1)} ms)`);
  } finally {
    await a.close();
    await b.close();
  }
});

test("a 429 with Retry-After pauses the key; the request is sent again when the pause ends", async () => {
  let first = true;
  const server = await serve((req, res) => {
    if (first) {
      first = false;
      res.writeHead(429, { 'retry-after': '1' }).end('slow down');
    } else {
      res.end('ok');
    }
  });
  try {
    const api = client(server, { quota: '100/second' });
    const response = await api.get('/x');
    assert.equal(response.status, 200);
    assert.equal(server.arrivals.length, 2);
    const gap = server.arrivals[1].at - server.arrivals[0].at;
    // Once the server's 1 s is over; a second pause would make it 2 s.
    assert.ok(gap >= 1000 - EARLY && gap < 1500, `sent again after the server's 1 s (${gap.toFixed(1)} ms)`);
  } finally {
    await server.close();
  }
});

test('respectRetryAfter: false hands the 429 to the caller', async () => {
  const server = await serve((req, res) => res.writeHead(429, { 'retry-after': '1' }).end());
  try {
    const api = client(server, { quota: '100/second', respectRetryAfter: false });
    await assert.rejects(api.get('/'), (e) => e.response?.status === 429);
    assert.equal(server.arrivals.length, 1);
    const retrying = client(server, { quota: '100/second', maxRetries: 1 });
    await assert.rejects(retrying.get('/'), (e) => e.response?.status === 429);
    assert.equal(server.arrivals.length, 3, 'one retry, then the 429 is the answer');
  } finally {
    await server.close();
  }
});

test('a leaky bucket shapes: admitted requests leave at its pace', async () => {
  const server = await serve();
  try {
    const api = client(server, { quota: '20/second burst 5', algorithm: 'leaky-bucket' });
    await warm(api, server, 300);
    const start = performance.now(); // before the first admission
    await Promise.all(Array.from({ length: 5 }, (_, i) => api.get(`/${i}`)));
    const at = api.sent.map((s) => s.at - start);
    assert.equal(at.length, 5);
    for (let i = 1; i < 5; i++) {
      assert.ok(at[i] >= i * 50, `request ${i} left at ${at[i].toFixed(1)} ms, before its slot at ${i * 50} ms: the bucket leaks one per 50 ms`);
    }
  } finally {
    await server.close();
  }
});

test('nothing is left waiting, and no timer, once the queue drains', async () => {
  const server = await serve();
  try {
    const api = client(server, { quota: '20/second burst 1' });
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const pending = Promise.all(Array.from({ length: 4 }, () => api.get('/')));
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(api.sluicegate.queued() > 0);
    await pending;
    assert.equal(api.sluicegate.queued(), 0);
    assert.equal(timers(), before, 'no timer left behind');
  } finally {
    await server.close();
  }
});

test('bad options are TypeErrors naming the problem', () => {
  const api = axios.create();
  assert.throws(() => throttle({}, { quota: '1/s' }), /must be an axios instance/);
  assert.throws(() => throttle(api, 5), /`options` must be an object/);
  assert.throws(() => throttle(api, { quota: 5 }), /`quota` must be a string/);
  assert.throws(() => throttle(api, { limits: [] }), /Invalid rate limit options/); // empty limits: as axios-rate-limit, none given
  assert.throws(() => throttle(api, { limits: [{ quota: '1/s', key: 'host' }] }), /limits\[0\]: `key` must be a function/);
  assert.throws(() => throttle(api, { quota: '1/s', limits: [{ quota: '1/s' }] }), /not both/);
  assert.throws(() => throttle(api, { quota: '1/fortnight' }), /invalid quota "1\/fortnight"/);
  assert.throws(() => throttle(api, { quota: '1/s', respectRetryAfter: 'yes' }), /`respectRetryAfter` must be a boolean/);
});
