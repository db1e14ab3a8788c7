'use strict';
// The run-time warnings for set-ups that silently count clients together, each given once
// per middleware (`process.emitWarning`), as express-rate-limit warns: express's `trust
// proxy` set while `trustedProxies` is not (saying what to write instead), and an unknown
// `standardHeaders` draft (no standard headers then, as express-rate-limit). Real express 4
// and 5 over 127.0.0.1.

const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('..');
const { EXPRESS, expressApp, listen, get } = require('./support/apps');

/** The warnings of `code` emitted while `fn` runs. */
async function warned(code, fn) {
  const seen = [];
  const listener = (warning) => {
    if (warning.code === code) seen.push(warning.message);
  };
  process.on('warning', listener);
  try {
    await fn();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

/** Three requests with different X-Forwarded-For to an app of `express` set with `trust proxy`. */
async function behindTrustProxy(express, setting, options) {
  const app = expressApp(express, rateLimit(options));
  app.set('trust proxy', setting);
  const server = await listen(app);
  try {
    const answers = [];
    for (const client of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) answers.push(await get(server.url, '/info', { 'x-forwarded-for': client }));
    return answers.map((a) => JSON.parse(a.body).key);
  } finally {
    await server.close();
  }
}

for (const [label, express] of Object.entries(EXPRESS)) {
  test(`${label}: app.set('trust proxy', ...) without trustedProxies is warned about once, saying what to write`, async () => {
    let keys;
    const warnings = await warned('SLUICEGATE_TRUST_PROXY', async () => {
      keys = await behindTrustProxy(express, 1, { quota: '10/minute' });
    });
    assert.deepEqual(keys, ['127.0.0.1', '127.0.0.1', '127.0.0.1'], 'trust proxy is not read: every client has the peer\'s address');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /^rateLimit: express's 'trust proxy' is set \(1\), but rateLimit does not read it \(nor req.ip\)/);
    assert.match(warnings[0], /Give the middleware trustedProxies: \[the addresses or networks of your proxies\] \(for example \['10.0.0.0\/8'\]\); validate: \{ trustProxy: false \} silences this warning$/);

    const named = await warned('SLUICEGATE_TRUST_PROXY', () => behindTrustProxy(express, 'loopback, 10.0.0.0/8', { quota: '10/minute' }));
    assert.match(named[0], /Give the middleware trustedProxies: \["127.0.0.0\/8","::1","10.0.0.0\/8"\];/);
  });

  test(`${label}: with trustedProxies given, or the warning silenced, or no limit by address, nothing is said`, async () => {
    for (const options of [
      { quota: '10/minute', trustedProxies: ['127.0.0.1'] },
      { quota: '10/minute', validate: { trustProxy: false } },
      { quota: '10/minute', validate: false },
      { quota: '10/minute', key: 'global' },
    ]) {
      let keys;
      const warnings = await warned('SLUICEGATE_TRUST_PROXY', async () => {
        keys = await behindTrustProxy(express, true, options);
      });
      assert.deepEqual(warnings, [], JSON.stringify(options));
      if (options.trustedProxies) assert.deepEqual(keys, ['198.51.100.1', '198.51.100.2', '198.51.100.3'], 'trustedProxies is read');
    }
  });
}

test('an unknown standardHeaders draft sends no standard headers, with one warning, as express-rate-limit', async () => {
  let limiter;
  const warnings = await warned('SLUICEGATE_HEADERS_DRAFT', () => {
    limiter = rateLimit({ quota: '5/minute', standardHeaders: 'draft-9' });
  });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /`standardHeaders` "draft-9" is not a draft this package writes, so no standard headers are sent: use true .*'draft-10'/);
  const server = await listen(expressApp(EXPRESS['express 5'], limiter));
  try {
    const answer = await get(server.url);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.ratelimit, undefined);
    assert.equal(answer.headers['ratelimit-policy'], undefined);
    assert.equal(answer.headers['x-ratelimit-limit'], '5', 'the legacy headers stay');
  } finally {
    await server.close();
  }
  const quiet = await warned('SLUICEGATE_HEADERS_DRAFT', () => rateLimit({ quota: '5/minute', standardHeaders: 'nope', validate: { headersDraftVersion: false } }));
  assert.deepEqual(quiet, []);
});
