'use strict';
// rateLimit under real express 4 and express 5 (and a plain http server), over real HTTP on
// 127.0.0.1: the admissions, refusals and headers the library decides, several limits
// all-or-nothing, key functions, req.rateLimit, and a leaky bucket's wait.

const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('..');
const { EXPRESS, expressApp, listen, get, rateLimitHeaders } = require('./support/apps');

/** Runs `fn(server)` against an express app of `express` behind `rateLimit(options)`. */
async function withApp(express, options, fn, routes) {
  const app = expressApp(express, rateLimit(options));
  routes?.(app);
  const server = await listen(app);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

for (const [label, express] of Object.entries(EXPRESS)) {
  test(`${label}: 200s, then a 429 with Retry-After; the draft-10 headers and, by default as in express-rate-limit v7+, the X-RateLimit trio on every response`, async () => {
    // GCRA 3/minute: one request every 20 s, 3 at once. Requests here are ms apart, so the
    // seconds (rounded up) are exact.
    await withApp(express, { quota: '3/minute' }, async ({ url }) => {
      const seen = [];
      for (let i = 0; i < 4; i++) seen.push(await get(url));
      const now = Math.ceil(Date.now() / 1000);
      assert.deepEqual(seen.map((r) => r.status), [200, 200, 200, 429]);
      assert.deepEqual(seen.slice(0, 3).map((r) => r.body), ['ok', 'ok', 'ok']);
      // X-RateLimit-Reset: a Unix timestamp, now (rounded up) plus `t`.
      const legacy = (response, t) => {
        const [[, limit], [, remaining], [, reset]] = rateLimitHeaders(response).filter(([name]) => name.startsWith('x-'));
        assert.ok(Math.abs(Number(reset) - (now + t)) <= 1, `X-RateLimit-Reset ${reset}, expected about ${now + t}`);
        return [limit, remaining];
      };
      const standard = (response, also) => rateLimitHeaders(response, also).filter(([name]) => !name.startsWith('x-'));
      assert.deepEqual(standard(seen[0]), [['ratelimit', '"ip";r=2;t=20'], ['ratelimit-policy', '"ip";q=3;w=60']]);
      assert.deepEqual(legacy(seen[0], 20), ['3', '2']);
      assert.deepEqual(standard(seen[2]), [['ratelimit', '"ip";r=0;t=60'], ['ratelimit-policy', '"ip";q=3;w=60']]);
      const refused = seen[3];
      assert.deepEqual(standard(refused, ['content-type']), [
        ['content-type', 'text/plain; charset=utf-8'],
        ['ratelimit', '"ip";r=0;t=20'],
        ['ratelimit-policy', '"ip";q=3;w=60'],
        ['retry-after', '20'],
      ]);
      assert.deepEqual(legacy(refused, 20), ['3', '0']);
      assert.equal(refused.body, 'too many requests for limit "ip"; retry after 20 seconds\n');
    });
  });

  test(`${label}: a request without its header key gets 400 with the library's sentence`, async () => {
    await withApp(express, { limits: [{ name: 'token', key: 'header:x-api-key', quota: '5/second' }] }, async ({ url }) => {
      const missing = await get(url);
      assert.equal(missing.status, 400);
      assert.equal(missing.body, 'limit "token": the x-api-key header is missing or empty\n');
      assert.deepEqual(rateLimitHeaders(missing), [['ratelimit-policy', '"token";q=5;w=1']]);
      const given = await get(url, '/', { 'x-api-key': 'k-1' });
      assert.equal(given.status, 200);
      assert.equal(given.headers.ratelimit, '"token";r=4;t=1');
    });
  });

  test(`${label}: several limits are all-or-nothing: a request one limit refuses consumes none of the others`, async () => {
    const limits = [
      { name: 'ip', key: 'ip', quota: '3/minute', algorithm: 'fixed-window' },
      { name: 'user', key: 'header:x-user', quota: '1/minute', algorithm: 'sliding-window' },
    ];
    await withApp(express, { limits }, async ({ url }) => {
      const as = (user) => get(url, '/', { 'x-user': user });
      assert.equal((await as('alice')).status, 200);
      const again = await as('alice');
      assert.equal(again.status, 429);
      assert.match(again.body, /^too many requests for limit "user"; retry after \d+ seconds\n$/);
      // Had alice's refused request counted against "ip" (3 a minute), carol would be refused.
      assert.equal((await as('bob')).status, 200);
      assert.equal((await as('carol')).status, 200);
      const dave = await as('dave');
      assert.equal(dave.status, 429);
      assert.match(dave.body, /^too many requests for limit "ip"; /);
      assert.equal(dave.headers['ratelimit-policy'], '"ip";q=3;w=60, "user";q=1;w=60');
    });
  });

  test(`${label}: a key function's key, a Promise of one, and none (400)`, async () => {
    for (const key of [(req) => req.headers['x-user'], async (req) => req.headers['x-user']]) {
      await withApp(express, { limits: [{ name: 'user', key, quota: '1/minute' }] }, async ({ url }) => {
        const as = (user) => get(url, '/', user ? { 'x-user': user } : {});
        assert.equal((await as('alice')).status, 200);
        assert.equal((await as('alice')).status, 429);
        assert.equal((await as('bob')).status, 200);
        const none = await as(null);
        assert.equal(none.status, 400);
        assert.equal(none.body, 'limit "user": its key function found no key in this request\n');
      });
    }
  });

  test(`${label}: a key function that throws, or returns an object, goes to express's error handling`, async () => {
    const cases = [
      [() => { throw new Error('no user'); }, 'no user'],
      [() => ({ id: 1 }), 'rateLimit: the key function of limit "user" must return a string (or nothing), got an object'],
    ];
    for (const [key, message] of cases) {
      await withApp(
        express,
        { limits: [{ name: 'user', key, quota: '1/minute' }] },
        async ({ url }) => {
          const response = await get(url);
          assert.equal(response.status, 500);
          assert.equal(response.body, message);
        },
        (app) => app.use((error, req, res, next) => res.status(500).send(error.message)),
      );
    }
  });

  test(`${label}: the request's rateLimit info, under requestPropertyName`, async () => {
    const options = { quota: '10/minute', requestPropertyName: 'limits' };
    await withApp(
      express,
      options,
      async ({ url }) => {
        const before = Date.now();
        const info = JSON.parse((await get(url, '/limits')).body);
        assert.equal(info.name, 'ip');
        assert.equal(info.limit, 10);
        assert.equal(info.remaining, 9);
        assert.equal(info.used, 1);
        const reset = Date.parse(info.resetTime) - before;
        assert.ok(reset >= 6000 && reset <= 7000, `resetTime is the header's t (6 s) from now: ${reset} ms`);
        assert.equal(JSON.parse((await get(url, '/info')).body), null, 'nothing under the default name');
      },
      (app) => app.get('/limits', (req, res) => res.json(req.limits)),
    );
  });

  test(`${label}: a leaky bucket holds each request for its wait before it reaches the app`, async () => {
    const reached = [];
    let sent;
    await withApp(
      express,
      { quota: '10/second', algorithm: 'leaky-bucket' },
      async ({ url }) => {
        sent = performance.now();
        const responses = await Promise.all([get(url, '/at'), get(url, '/at'), get(url, '/at')]);
        assert.deepEqual(responses.map((r) => r.status), [200, 200, 200]);
      },
      (app) => app.get('/at', (req, res) => {
        reached.push(performance.now());
        res.send('ok');
      }),
    );
    // The engine releases request k at the first's decision + 100 ms × k, and never early;
    // the first is decided after `sent`, so request k reaches the app no sooner than
    // `sent` + 100 ms × k (measured from `sent`, not from when the first reached the app,
    // which a busy event loop can delay by milliseconds).
    reached.sort((a, b) => a - b);
    for (let k = 1; k < 3; k++) {
      const gap = reached[k] - sent;
      assert.ok(gap >= 100 * k - 1, `request ${k} reached the app ${gap.toFixed(1)} ms after the requests were sent (its slot: ${100 * k} ms)`);
      assert.ok(gap < 100 * k + 400, `request ${k} was held ${gap.toFixed(1)} ms, far beyond its slot`);
    }
  });
}

test('a plain http.createServer app: the middleware uses only Node\'s own response methods', async () => {
  const limit = rateLimit({ quota: '2/minute', legacyHeaders: false });
  const server = await listen((req, res) =>
    limit(req, res, (error) => {
      res.statusCode = error ? 500 : 200;
      res.end(error ? String(error) : 'ok');
    }),
  );
  try {
    const seen = [await get(server.url), await get(server.url), await get(server.url)];
    assert.deepEqual(seen.map((r) => r.status), [200, 200, 429]);
    assert.equal(seen[0].headers.ratelimit, '"ip";r=1;t=30');
    assert.deepEqual(rateLimitHeaders(seen[2], ['content-type']), [
      ['content-type', 'text/plain; charset=utf-8'],
      ['ratelimit', '"ip";r=0;t=30'],
      ['ratelimit-policy', '"ip";q=2;w=60'],
      ['retry-after', '30'],
    ]);
    assert.equal(seen[2].body, 'too many requests for limit "ip"; retry after 30 seconds\n');
  } finally {
    await server.close();
  }
});

test('an ESM import gives the same rateLimit', async () => {
  const esm = await import('../index.mjs');
  assert.equal(esm.rateLimit, rateLimit);
});
