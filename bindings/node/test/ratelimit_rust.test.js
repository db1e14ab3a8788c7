'use strict';
// The middleware answers byte for byte as the Rust tower layer does (the same writer): the
// example server `http_server` and an express app with the same limits get the same
// requests, and their statuses, rate-limit headers (names as sent, values) and refusals'
// bodies must be equal: admissions, a 429, a 400 for a missing header key, the legacy
// headers, and a 503 when Redis is down and errors deny.

const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('..');
const { EXPRESS, expressApp, listen, get, rateLimitHeaders } = require('./support/apps');
const { startHttpServer } = require('./support/servers');
const { freePort } = require('./support/redis');

/** The `--limit` of each limit, as http_server reads it. */
function flag(limit) {
  const key = limit.key === 'ip' ? 'peer-ip' : limit.key;
  return ['--limit', `name=${limit.name}; key=${key}; quota=${limit.quota}; algorithm=${limit.algorithm}`];
}

/** What must be equal in two answers to one request. */
function answer(response) {
  const refused = response.status !== 200;
  return {
    status: response.status,
    headers: rateLimitHeaders(response, refused ? ['content-type'] : []),
    body: refused ? response.body : '(the app\'s)',
  };
}

/** Sends `requests` (header sets) to both, in turn, and compares each pair of answers. */
async function compare(rust, node, requests) {
  const answers = [];
  for (const [i, headers] of requests.entries()) {
    const [r, n] = [answer(await get(rust.url, '/', headers)), answer(await get(node.url, '/', headers))];
    assert.deepEqual(n, r, `request ${i} (${JSON.stringify(headers)}): express answered otherwise than http_server`);
    answers.push(n);
  }
  return answers;
}

/** Runs `fn(rust, node)` with http_server and an express app of `express` configured alike
 * (the legacy headers, on by default here as in express-rate-limit, off unless asked for, as
 * http_server's `--legacy-headers`). */
async function withBoth(express, { limits, args = [], options = {} }, fn) {
  const rust = await startHttpServer([...limits.flatMap(flag), ...args]);
  let node;
  try {
    node = await listen(expressApp(express, rateLimit({ limits, legacyHeaders: false, ...options })));
    await fn(rust, node);
  } finally {
    await node?.close();
    await rust.stop();
  }
}

const LIMITS = [
  { name: 'ip', key: 'ip', quota: '3/minute', algorithm: 'gcra' },
  // A name the headers must escape (a quote, a non-ASCII letter).
  { name: 'token "café"', key: 'header:x-api-key', quota: '100/minute burst 20', algorithm: 'sliding-window' },
];

for (const [label, express] of Object.entries(EXPRESS)) {
  test(`${label}: admissions, a 429 and a 400 are byte for byte http_server's`, async () => {
    await withBoth(express, { limits: LIMITS }, async (rust, node) => {
      const key = { 'x-api-key': 'k-1' };
      const answers = await compare(rust, node, [key, key, key, key, {}]);
      assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 429, 400]);
      assert.deepEqual(answers[3].headers, [
        ['content-type', 'text/plain; charset=utf-8'],
        ['ratelimit', '"ip";r=0;t=20'],
        ['ratelimit-policy', '"ip";q=3;w=60, "token \\"caf%c3%a9\\"";q=100;w=60'],
        ['retry-after', '20'],
      ]);
      assert.equal(answers[4].body, 'limit "token \\"café\\"": the x-api-key header is missing or empty\n');
    });
  });

  test(`${label}: the legacy X-RateLimit headers are http_server's`, async () => {
    const limits = [{ name: 'ip', key: 'ip', quota: '2/minute', algorithm: 'gcra' }];
    await withBoth(express, { limits, args: ['--legacy-headers'], options: { legacyHeaders: true } }, async (rust, node) => {
      const answers = await compare(rust, node, [{}, {}, {}]);
      assert.deepEqual(answers.map((a) => a.status), [200, 200, 429]);
      assert.ok(answers[2].headers.some(([name, value]) => name === 'x-ratelimit-remaining' && value === '0'));
    });
  });

  test(`${label}: with Redis down and onBackendError 'deny', the 503 is http_server's`, async () => {
    const redis = `redis://127.0.0.1:${await freePort()}/`; // nothing listens there
    const limits = [{ name: 'ip', key: 'ip', quota: '3/minute', algorithm: 'gcra' }];
    const setup = { limits, args: ['--redis', redis, '--on-backend-error', 'deny'], options: { redis, onBackendError: 'deny' } };
    await withBoth(express, setup, async (rust, node) => {
      const [refused] = await compare(rust, node, [{}]);
      assert.equal(refused.status, 503);
      assert.deepEqual(refused.headers.find(([name]) => name === 'retry-after'), ['retry-after', '1']);
    });
  });
}
