'use strict';
// rateLimit on a Unix domain socket (`app.listen('app.sock')`, the usual setup behind nginx),
// under real express 4 and 5: the socket has no peer address, so every request is keyed
// `unix` (never a 500) and the middleware warns once that all clients share that key; with
// `trustedProxies: ['unix']` behind a real nginx, each client is keyed by the address nginx
// forwards, and a client's own X-Forwarded-For changes nothing.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { rateLimit } = require('..');
const { EXPRESS } = require('./support/apps');
const { tempDir, listenOnSocket, request, startNginx } = require('./support/unix');

/** An app of `express` with `limiter` in front of `GET /`, answering the request's key. */
function app(express, limiter) {
  const a = express();
  a.get('/', limiter, (req, res) => res.send(req.rateLimit.key));
  return a;
}

/** The process warnings emitted while `fn` runs, by code. */
async function warningsDuring(fn) {
  const seen = [];
  const listener = (warning) => seen.push(warning);
  process.on('warning', listener);
  try {
    await fn();
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

for (const [label, express] of Object.entries(EXPRESS)) {
  test(`${label}: on a Unix socket every request is keyed "unix", never a 500, with one warning`, async () => {
    const { dir, rm } = tempDir();
    const socketPath = path.join(dir, 'app.sock');
    const server = await listenOnSocket(app(express, rateLimit({ quota: '2/minute' })), socketPath);
    try {
      let answers;
      const warnings = await warningsDuring(async () => {
        answers = [];
        for (let i = 0; i < 4; i++) answers.push(await request({ socketPath }, '/', { 'x-forwarded-for': `198.51.100.${i}` }));
      });
      assert.deepEqual(answers.map((a) => a.status), [200, 200, 429, 429]);
      assert.deepEqual(answers.slice(0, 2).map((a) => a.body), ['unix', 'unix']);
      assert.equal(answers[0].headers.ratelimit, '"ip";r=1;t=30');
      const unix = warnings.filter((w) => w.code === 'SLUICEGATE_UNIX_SOCKET');
      assert.equal(unix.length, 1, 'warned once, not per request');
      assert.match(unix[0].message, /^rateLimit: requests arrive on a Unix socket, which has no client address: every limit keyed by client address counts all of them under the one key "unix"/);
      assert.match(unix[0].message, /add "unix" to trustedProxies to key each client by the address the proxy forwards$/);
    } finally {
      await server.close();
      rm();
    }
  });

  test(`${label}: behind nginx, trustedProxies: ['unix'] keys each client by the address nginx forwards`, async () => {
    const { dir, rm } = tempDir();
    const socketPath = path.join(dir, 'app.sock');
    const limiter = rateLimit({ quota: '2/minute', trustedProxies: ['unix'] });
    const server = await listenOnSocket(app(express, limiter), socketPath);
    let nginx;
    try {
      nginx = await startNginx(dir, socketPath);
      const via = (from, headers) => request({ port: nginx.port, from }, '/', headers);
      const warnings = await warningsDuring(async () => {
        // Two clients, on two loopback addresses: nginx appends each one's address.
        const first = [await via('127.0.0.2'), await via('127.0.0.2', { 'x-forwarded-for': '6.6.6.6' }), await via('127.0.0.2')];
        assert.deepEqual(first.map((a) => a.status), [200, 200, 429]);
        assert.deepEqual(first.slice(0, 2).map((a) => a.body), ['127.0.0.2', '127.0.0.2'], 'a client\'s own X-Forwarded-For changes nothing');
        const other = await via('127.0.0.3');
        assert.equal(other.status, 200, 'another client has its own count');
        assert.equal(other.body, '127.0.0.3');
      });
      assert.deepEqual(warnings.filter((w) => w.code === 'SLUICEGATE_UNIX_SOCKET'), [], 'a trusted socket is not warned about');
      // Straight on the socket, with no forwarded header: the socket's peer itself.
      assert.equal((await request({ socketPath })).body, 'unix');
    } finally {
      await nginx?.stop();
      await server.close();
      rm();
    }
  });
}

test('the warning can be silenced, and is not given when no limit is keyed by client address', async () => {
  const { dir, rm } = tempDir();
  try {
    for (const [i, options] of [
      { quota: '5/minute', validate: { unixSocket: false } },
      { quota: '5/minute', validate: false },
      { quota: '5/minute', key: 'header:x-user' },
    ].entries()) {
      const socketPath = path.join(dir, `app${i}.sock`);
      const server = await listenOnSocket(app(EXPRESS['express 5'], rateLimit(options)), socketPath);
      try {
        const warnings = await warningsDuring(() => request({ socketPath }, '/', { 'x-user': 'alice' }));
        assert.deepEqual(warnings.filter((w) => w.code === 'SLUICEGATE_UNIX_SOCKET'), [], JSON.stringify(options));
      } finally {
        await server.close();
      }
    }
  } finally {
    rm();
  }
});
