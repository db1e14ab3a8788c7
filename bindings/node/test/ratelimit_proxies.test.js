'use strict';
// The client's address is the library's rule, not express's: the socket's peer, or what a
// trusted proxy forwarded. A spoofed X-Forwarded-For from an untrusted peer is ignored (with
// express's own `trust proxy` on), a trusted peer's is used; IPv6 clients are grouped by /64;
// IPv4-mapped addresses are IPv4. Each limit below admits one request a minute per key, so a
// 429 says two requests shared a key and a 200 that they did not.

const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('..');
const { EXPRESS, expressApp, listen, get } = require('./support/apps');

/** Statuses of GETs with these X-Forwarded-For values (null: none), in turn. */
async function statuses(url, forwarded, header = 'x-forwarded-for') {
  const out = [];
  for (const value of forwarded) out.push((await get(url, '/', value === null ? {} : { [header]: value })).status);
  return out;
}

async function withApp(express, options, fn, { host = '127.0.0.1', trustProxy = false } = {}) {
  const app = expressApp(express, rateLimit({ quota: '1/minute', ...options }));
  app.set('trust proxy', trustProxy);
  const server = await listen(app, host);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

for (const [label, express] of Object.entries(EXPRESS)) {
  test(`${label}: a spoofed X-Forwarded-For from an untrusted peer is ignored, even with express's trust proxy on`, async () => {
    await withApp(
      express,
      {},
      async ({ url }) => {
        assert.deepEqual(await statuses(url, ['203.0.113.1', '203.0.113.2', null]), [200, 429, 429]);
      },
      { trustProxy: true },
    );
  });

  test(`${label}: a trusted proxy's X-Forwarded-For and Forwarded name the client`, async () => {
    await withApp(express, { trustedProxies: ['127.0.0.1'], forwardedHeaders: 'both' }, async ({ url }) => {
      // The rightmost address that is not a trusted proxy is the client.
      assert.deepEqual(await statuses(url, ['203.0.113.1', '203.0.113.1', '198.51.100.9, 203.0.113.2', '203.0.113.2, 127.0.0.1']), [200, 429, 200, 429]);
      assert.deepEqual(await statuses(url, ['for=203.0.113.3', 'for="203.0.113.3:4711"'], 'forwarded'), [200, 429]);
    });
  });

  test(`${label}: by default only X-Forwarded-For is read, as the library's default; Forwarded is then ignored`, async () => {
    await withApp(express, { trustedProxies: ['127.0.0.1'] }, async ({ url }) => {
      // Two clients named only in Forwarded are both the peer 127.0.0.1: one key.
      assert.deepEqual(await statuses(url, ['for=203.0.113.4', 'for=203.0.113.5'], 'forwarded'), [200, 429]);
      assert.deepEqual(await statuses(url, ['203.0.113.4', '203.0.113.5']), [200, 200]);
    });
  });

  test(`${label}: IPv6 clients share a limit per /64 (ipv6Prefix), and each alone with 128`, async () => {
    await withApp(express, { trustedProxies: ['127.0.0.0/8'] }, async ({ url }) => {
      assert.deepEqual(await statuses(url, ['2001:db8:1:2::1', '2001:db8:1:2:ffff::9', '2001:db8:1:3::1']), [200, 429, 200]);
    });
    await withApp(express, { trustedProxies: ['127.0.0.0/8'], ipv6Prefix: 128 }, async ({ url }) => {
      assert.deepEqual(await statuses(url, ['2001:db8::1', '2001:db8::2', '2001:db8::1']), [200, 200, 429]);
    });
  });

  test(`${label}: IPv4-mapped IPv6 addresses are IPv4, as peers (a dual-stack listener) and as forwarded clients`, async () => {
    // Listening on '::', an IPv4 client's peer address is '::ffff:127.0.0.1': trusted as
    // 127.0.0.1, so the forwarded clients count; '::ffff:198.51.100.7' is 198.51.100.7.
    await withApp(
      express,
      { trustedProxies: ['127.0.0.1'] },
      async ({ url }) => {
        assert.deepEqual(await statuses(url, ['203.0.113.1', '203.0.113.2', '::ffff:198.51.100.7', '198.51.100.7']), [200, 200, 200, 429]);
      },
      { host: '::' },
    );
  });
}
