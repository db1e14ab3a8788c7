'use strict';
// rateLimit's options that express-rate-limit has too, by its names and meanings (skip,
// handler, message, statusCode, windowMs + limit, standardHeaders, legacyHeaders), under
// express 4 and 5; and the sentences for options that are wrong or do not exist here.

const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('..');
const { EXPRESS, expressApp, listen, get, rateLimitHeaders } = require('./support/apps');

async function withApp(express, options, fn) {
  const server = await listen(expressApp(express, rateLimit(options)));
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

/** GETs `url` `n` times; the responses. */
async function times(n, url, headers) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await get(url, '/', headers));
  return out;
}

const SENTENCE = 'too many requests for limit "ip"; retry after 60 seconds\n';

for (const [label, express] of Object.entries(EXPRESS)) {
  test(`${label}: skip (a boolean or a Promise of one) lets requests through uncounted and without headers`, async () => {
    for (const skip of [(req) => req.headers['x-skip'] === 'yes', async (req) => req.headers['x-skip'] === 'yes']) {
      await withApp(express, { quota: '1/minute', skip }, async ({ url }) => {
        const skipped = await times(3, url, { 'x-skip': 'yes' });
        assert.deepEqual(skipped.map((r) => r.status), [200, 200, 200]);
        assert.deepEqual(rateLimitHeaders(skipped[0]), []);
        assert.deepEqual((await times(2, url)).map((r) => r.status), [200, 429], 'the skipped ones were not counted');
      });
    }
  });

  test(`${label}: handler answers a 429 after the rate-limit headers are set, as express-rate-limit calls it`, async () => {
    const handler = (req, res, next, options) => {
      res.status(options.statusCode).json({ message: options.message, remaining: req.rateLimit.remaining, named: options.quota });
    };
    await withApp(express, { quota: '1/minute', handler }, async ({ url }) => {
      const [, refused] = await times(2, url);
      assert.equal(refused.status, 429);
      assert.match(refused.headers['content-type'], /^application\/json/);
      // The library's sentence, without the line end its plain-text body has.
      assert.deepEqual(JSON.parse(refused.body), { message: SENTENCE.trimEnd(), remaining: 0, named: '1/minute' });
      const standard = rateLimitHeaders(refused).filter(([name]) => !name.startsWith('x-'));
      assert.deepEqual(standard, [['ratelimit', '"ip";r=0;t=60'], ['ratelimit-policy', '"ip";q=1;w=60'], ['retry-after', '60']]);
    });
  });

  test(`${label}: message (a string, an object, a function) and statusCode replace a 429's body and status`, async () => {
    const cases = [
      [{ message: 'Slow down.' }, 429, 'text/plain; charset=utf-8', 'Slow down.'],
      [{ message: { error: 'slow down' }, statusCode: 503 }, 503, 'application/json; charset=utf-8', '{"error":"slow down"}'],
      [{ message: async (req) => `Slow down, ${req.headers['x-user']}.` }, 429, 'text/plain; charset=utf-8', 'Slow down, alice.'],
      [{ statusCode: 418 }, 418, 'text/plain; charset=utf-8', SENTENCE],
    ];
    for (const [options, status, type, body] of cases) {
      await withApp(express, { quota: '1/minute', ...options }, async ({ url }) => {
        const [first, refused] = await times(2, url, { 'x-user': 'alice' });
        assert.equal(first.status, 200);
        assert.equal(refused.status, status);
        assert.equal(refused.headers['content-type'], type);
        assert.equal(refused.body, body);
        assert.equal(refused.headers['retry-after'], '60');
      });
    }
  });

  test(`${label}: windowMs + limit is the quota limit/windowMs in fixed windows`, async () => {
    await withApp(express, { windowMs: 60_000, limit: 2 }, async ({ url }) => {
      const seen = await times(3, url);
      assert.deepEqual(seen.map((r) => r.status), [200, 200, 429]);
      assert.equal(seen[0].headers['ratelimit-policy'], '"ip";q=2;w=60');
      // A fixed window ends on the minute (windows are aligned to the epoch).
      const t = Number(/;t=(\d+)$/.exec(seen[2].headers.ratelimit)[1]);
      assert.ok(t >= 1 && t <= 60 && seen[2].headers['retry-after'] === String(t), seen[2].headers.ratelimit);
    });
  });

  test(`${label}: standardHeaders: false, legacyHeaders: true sends only the X-RateLimit trio (Reset a Unix timestamp in seconds)`, async () => {
    await withApp(express, { quota: '2/minute', standardHeaders: false, legacyHeaders: true }, async ({ url }) => {
      const [first] = await times(1, url);
      const now = Math.floor(Date.now() / 1000);
      const headers = rateLimitHeaders(first);
      assert.deepEqual(headers.slice(0, 2), [['x-ratelimit-limit', '2'], ['x-ratelimit-remaining', '1']]);
      const [name, reset] = headers[2];
      assert.equal(name, 'x-ratelimit-reset');
      // GCRA's 2/minute refills one in 30 s: the timestamp is now (rounded up) + 30.
      assert.ok(Number(reset) >= now + 30 && Number(reset) <= now + 32, `X-RateLimit-Reset ${reset} at ${now}`);
    });
  });

  test(`${label}: standardHeaders true is draft-6 (as express-rate-limit), 'draft-7' and 'draft-8' their forms, omitted draft-10`, async () => {
    const first = async (standardHeaders) => {
      let response;
      await withApp(express, { windowMs: 60_000, limit: 5, standardHeaders, legacyHeaders: false }, async ({ url }) => {
        [response] = await times(1, url);
      });
      const names = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];
      return rateLimitHeaders(response, names).map(([name, value]) => [name.toLowerCase(), name === 'ratelimit-reset' || name === 'RateLimit-Reset' ? 'T' : value]);
    };
    const sixHeaders = await first(true);
    assert.deepEqual(sixHeaders.map(([n]) => n), ['ratelimit-limit', 'ratelimit-policy', 'ratelimit-remaining', 'ratelimit-reset']);
    assert.deepEqual(sixHeaders.filter(([n]) => n !== 'ratelimit-reset'), [['ratelimit-limit', '5'], ['ratelimit-policy', '5;w=60'], ['ratelimit-remaining', '4']]);
    assert.deepEqual(await first('draft-6'), sixHeaders);
    const seven = await first('draft-7');
    assert.equal(seven.length, 2);
    assert.deepEqual(seven[1], ['ratelimit-policy', '5;w=60']);
    assert.match(seven[0][1], /^limit=5, remaining=4, reset=\d+$/);
    // Draft-8 as express-rate-limit writes it: its quota name, `; ` and the key's partition
    // key (the base64 of the first 12 hex digits of the SHA-256 of "127.0.0.1").
    const pk = Buffer.from(require('node:crypto').createHash('sha256').update('127.0.0.1').digest('hex').slice(0, 12)).toString('base64');
    assert.deepEqual(await first('draft-8'), [['ratelimit', '"5-in-1min"; r=4; t=60'], ['ratelimit-policy', `"5-in-1min"; q=5; w=60; pk=:${pk}:`]]);
    assert.deepEqual(await first(undefined), [['ratelimit', '"ip";r=4;t=60'], ['ratelimit-policy', '"ip";q=5;w=60']], 'omitted: draft-10');
  });

  test(`${label}: with a burst above the limit, remaining is never above the quota in one response`, async () => {
    await withApp(express, { quota: '10/second burst 20', legacyHeaders: true }, async ({ url }) => {
      const [first] = await times(1, url);
      assert.equal(first.headers['ratelimit'], '"ip";r=10;t=1');
      assert.equal(first.headers['x-ratelimit-remaining'], '10');
    });
  });
}

test('the client-address options are read by the library, as Python reads them: any case, XFF', () => {
  for (const forwardedHeaders of ['XFF', 'X-Forwarded-For', 'Forwarded', 'BOTH']) {
    assert.equal(typeof rateLimit({ quota: '5/second', forwardedHeaders }), 'function', forwardedHeaders);
  }
  for (const onBackendError of ['Allow', 'DENY', 'Local']) {
    assert.equal(typeof rateLimit({ quota: '5/second', onBackendError }), 'function', onBackendError);
  }
});

test('options that are wrong, or express-rate-limit options that do not exist here, throw saying why', () => {
  assert.throws(() => rateLimit({ quota: '5/second', store: {} }), { name: 'TypeError', message: /`store` \(express-rate-limit\) has no counterpart here: .*redis: 'redis:/ });
  assert.throws(() => rateLimit({ quota: '5/second', skipFailedRequests: 'yes' }), { name: 'TypeError', message: /`skipFailedRequests` must be a boolean, got "yes"/ });
  assert.throws(() => rateLimit({ quota: '5/second', skipSuccessfulRequests: 1 }), { name: 'TypeError', message: /`skipSuccessfulRequests` must be a boolean, got 1/ });
  assert.throws(() => rateLimit({ quota: '5/second', requestWasSuccessful: true }), { name: 'TypeError', message: /`requestWasSuccessful` must be a function, got true/ });
  assert.throws(() => rateLimit({ quota: '5/second', passOnStoreError: true }), { message: /onBackendError/ });
  assert.throws(() => rateLimit({ quota: '5/second', quotas: 1 }), { name: 'TypeError', message: /unknown option `quotas`/ });
  assert.throws(() => rateLimit({ quota: '5/fortnight' }), { message: /^limit "ip": invalid quota "5\/fortnight"/ });
  assert.throws(() => rateLimit({ limits: [{ name: 'c', key: 'cookie:sid', quota: '5/second' }] }), { message: /^limit "c": .*cookie:sid/ });
  assert.throws(() => rateLimit({ limits: [{ name: 'a', quota: '5/s' }, { name: 'a', quota: '6/s' }] }), { message: /two limits are named "a"/ });
  assert.throws(() => rateLimit({ quota: '5/second', trustedProxies: ['10.0.0.0/33'] }), { message: /^trustedProxies: invalid network "10\.0\.0\.0\/33": the prefix is longer than the address$/ });
  assert.throws(() => rateLimit({ quota: '5/second', ipv6Prefix: 129 }), { name: 'RangeError', message: /`ipv6Prefix` must be a whole number between 0 and 128/ });
  assert.throws(() => rateLimit({ quota: '5/second', onBackendError: 'retry' }), { name: 'RangeError', message: /onBackendError: expected allow, deny or local, got "retry"/ });
  assert.throws(() => rateLimit({ quota: '5/second', onBackendError: true }), { name: 'TypeError', message: /`onBackendError` is 'allow', 'deny' or 'local', got true/ });
  assert.throws(() => rateLimit({ quota: '5/second', logger: { error: 'invalid logger' } }), { name: 'TypeError', message: /`logger` must be an object with `warn` and `error` functions/ });
  assert.throws(() => rateLimit({ quota: '5/second', validate: 'yes' }), { name: 'TypeError', message: /`validate` must be a boolean or an object/ });
  assert.throws(() => rateLimit({ quota: '5/second', clock: Date }), { name: 'TypeError', message: /`clock` must be a ManualClock or a DateClock/ });
  assert.throws(() => rateLimit({ quota: '5/second', forwardedHeaders: 'x-real-ip' }), { name: 'RangeError', message: /forwardedHeaders: forwarded headers are x-forwarded-for, forwarded or both, not "x-real-ip"/ });
  assert.throws(() => rateLimit({ quota: '5/second', windowMs: 1000 }), { message: /`quota` or `windowMs` \+ `limit`, not both/ });
  assert.throws(() => rateLimit({ limits: [{ name: 'ip', quota: '5/s' }], quota: '5/s' }), { message: /give `limits` or one limit's options/ });
});

for (const [label, express] of Object.entries(EXPRESS)) {
  test(`${label}: no options are express-rate-limit's defaults, 5 a minute in windows from each client's first request`, async () => {
    for (const options of [undefined, {}]) {
      await withApp(express, options, async ({ url }) => {
        for (let i = 0; i < 5; i++) assert.equal((await get(url)).status, 200);
        const refused = await get(url);
        assert.equal(refused.status, 429);
        assert.equal(refused.headers['retry-after'], '60');
        assert.equal(refused.headers['ratelimit-policy'], '"ip";q=5;w=60');
      });
    }
  });
}
