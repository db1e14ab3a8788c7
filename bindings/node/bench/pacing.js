'use strict';
// axios pacing: the send times of 1,000 throttled requests to a local server (127.0.0.1, in
// this process) against their ideal schedule (a send time is when axios hands the request to
// its adapter: an interceptor registered before the throttle's runs after it), sluicegate's throttle beside axios-rate-limit
// on the same quota. Two forms of one rate, 200 a second:
//   paced:  one request per 5 ms (sluicegate '200/second burst 1'; axios-rate-limit
//           { maxRequests: 1, perMilliseconds: 5 });
//   window: 200 per second as each library says it (sluicegate '200/second', a GCRA with a
//           burst of 200; axios-rate-limit { maxRPS: 200 }, a fixed window).
// For each: the gap error (each send's time after the previous one, minus the 5 ms the rate
// allows: positive is late, negative is early), as p50 / p99 of its absolute value and the
// most-early; the most sent in any 1-second span (the quota allows 200 with no burst, 400
// with a burst of 200 at a span's start, as the GCRA's is); and the total time against the
// ideal (1,000 requests at 200/s after a burst of B: (1000 - B) x 5 ms).
//
//   node bench/pacing.js [requests]

const http = require('node:http');
const axios = require('axios');
const rateLimit = require('axios-rate-limit');
const { throttle } = require('..');
const { quantile, machine } = require('./support');

const N = Number(process.argv[2] || 1000);
const INTERVAL = 5;

async function run(name, make, burst) {
  const arrivals = [];
  const server = http.createServer((req, res) => res.end('ok'));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const instance = axios.create({ baseURL: `http://127.0.0.1:${server.address().port}`, httpAgent: agent });
  instance.interceptors.request.use((config) => {
    arrivals.push(performance.now());
    return config;
  });
  const api = make(instance);
  // axios's first request loads its adapter and connects: not part of the schedule.
  await api.get('/');
  await new Promise((resolve) => setTimeout(resolve, 1100));
  arrivals.length = 0;
  await Promise.all(Array.from({ length: N }, () => api.get('/')));
  agent.destroy();
  await new Promise((resolve) => server.close(resolve));

  const gaps = [];
  for (let i = burst; i < arrivals.length; i++) gaps.push(arrivals[i] - arrivals[i - 1] - INTERVAL);
  const abs = gaps.map(Math.abs);
  let most = 0;
  for (let i = 0, j = 0; i < arrivals.length; i++) {
    while (arrivals[i] - arrivals[j] >= 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  const total = arrivals[arrivals.length - 1] - arrivals[0];
  const ideal = (N - burst) * INTERVAL;
  console.log(
    `  ${name.padEnd(48)} gap error p50 ${quantile(abs, 0.5).toFixed(2).padStart(6)} ms  p99 ${quantile(abs, 0.99).toFixed(2).padStart(6)} ms  ` +
      `most early ${Math.min(0, ...gaps).toFixed(2).padStart(6)} ms  most in 1 s ${String(most).padStart(4)}  total ${total.toFixed(0)} ms (ideal ${ideal})`,
  );
}

(async () => {
  console.log(`# axios pacing: ${N} requests at 200/s to 127.0.0.1; ${machine()}`);
  console.log('paced (one per 5 ms):');
  await run("sluicegate throttle '200/second burst 1'", (a) => throttle(a, { quota: '200/second burst 1' }), 1);
  await run('axios-rate-limit { maxRequests: 1, perMilliseconds: 5 }', (a) => rateLimit(a, { maxRequests: 1, perMilliseconds: 5 }), 1);
  console.log('window (200 per second, each library\'s own way):');
  await run("sluicegate throttle '200/second' (burst 200)", (a) => throttle(a, { quota: '200/second' }), 200);
  await run('axios-rate-limit { maxRPS: 200 }', (a) => rateLimit(a, { maxRPS: 200 }), 200);
})();
