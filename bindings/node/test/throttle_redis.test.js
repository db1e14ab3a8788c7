'use strict';
// throttle() with its limits on a real redis-server: two processes share one limit; several
// limits stay all-or-nothing on Redis; a Redis that is down rejects requests promptly.

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const path = require('node:path');
const { spawn } = require('node:child_process');
const axios = require('axios');
const { throttle } = require('..');
const { serve } = require('./support/http');
const { startRedis, freePort } = require('./support/redis');

let redis;
test.before(async () => {
  redis = await startRedis();
});
test.after(async () => {
  await redis?.stop();
});

function worker(server, name, count, quota) {
  const child = spawn(process.execPath, [path.join(__dirname, 'support', 'throttle_worker.js'), redis.url, server.url, name, String(count), quota], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker ${name} exited with ${code}`))));
  });
}

test('two processes throttled through one Redis share one limit', async () => {
  const server = await serve();
  try {
    // 10 a second with no burst: shared, 12 requests take 1.1 s; each process alone would
    // send its 6 in 0.5 s.
    await Promise.all([worker(server, 'a', 6, '10/second burst 1'), worker(server, 'b', 6, '10/second burst 1')]);
    const at = server.arrivals.map((a) => a.at).sort((x, y) => x - y);
    assert.equal(at.length, 12);
    const names = new Set(server.arrivals.map((a) => a.path.split('/')[1]));
    assert.deepEqual([...names].sort(), ['a', 'b']);
    // Redis admits one per 100 ms on its clock; each process then sends within a few ms, or
    // tens on a loaded machine, so spans are checked rather than single gaps, with that
    // margin. Unshared, the two processes would send all 12 in about 500 ms, any 6 in ~250.
    const margin = 150;
    for (let i = 0; i + 5 < at.length; i++) {
      const span = at[i + 5] - at[i];
      assert.ok(span >= 500 - margin, `6 requests (${i} to ${i + 5}) arrived within ${span.toFixed(0)} ms: the limit was not shared`);
    }
    assert.ok(at[11] - at[0] >= 1100 - margin, `12 requests spread over ${(at[11] - at[0]).toFixed(0)} ms`);
  } finally {
    await server.close();
  }
});

test('several limits on Redis decide all-or-nothing', async () => {
  const server = await serve();
  try {
    const api = throttle(axios.create({ baseURL: server.url, httpAgent: new http.Agent({ keepAlive: false }) }), {
      redis: redis.url,
      prefix: `aon:${Date.now()}:`,
      limits: [
        { name: 'user', quota: '1/second', key: (config) => config.headers['x-user'] },
        { name: 'all', quota: '3/second burst 3', key: () => 'everyone' },
      ],
    });
    const as = (user) => api.get(`/${user}`, { headers: { 'x-user': user } });
    await as('warm');
    await new Promise((resolve) => setTimeout(resolve, 1000)); // 'all' refills
    server.arrivals.length = 0;
    const start = performance.now();
    await as('alice');
    const second = as('alice');
    await Promise.all([as('bob'), as('carol')]);
    const carol = server.arrivals.find((a) => a.path === '/carol').at - start;
    assert.ok(carol < 150, `bob and carol went at once: alice's denied request took none of the 3 (carol at ${carol.toFixed(0)} ms)`);
    await second;
    const again = server.arrivals.filter((a) => a.path === '/alice')[1].at - start;
    assert.ok(again >= 1000 - 5, `alice's second waited for her limit (${again.toFixed(0)} ms)`);
  } finally {
    await server.close();
  }
});

test('a Redis that is down: throttled requests reject promptly with an Error', async () => {
  const server = await serve();
  try {
    const port = await freePort();
    const api = throttle(axios.create({ baseURL: server.url }), { quota: '5/second', redis: `redis://127.0.0.1:${port}/` });
    const start = performance.now();
    await assert.rejects(api.get('/'), (e) => e instanceof Error && /unavailable|refused/i.test(e.message));
    assert.ok(performance.now() - start < 1500);
    assert.equal(server.arrivals.length, 0, 'nothing was sent');
  } finally {
    await server.close();
  }
});
