'use strict';
// express-rate-limit's skipFailedRequests, skipSuccessfulRequests and requestWasSuccessful,
// on the library's refunds: under express 4 and 5, in process and on a real redis-server
// (started on a free loopback port), through real HTTP requests.

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');

// Every refund the middleware asks of the native module, counted per handle (to see that a
// request is never given back twice); set before the package loads it.
const native = require('../lib/native');
const realRefund = native.httpRefund;
const refunds = new Map();
native.httpRefund = (handle) => {
  refunds.set(handle, (refunds.get(handle) ?? 0) + 1);
  return realRefund(handle);
};

const { rateLimit } = require('..');
const { startRedis } = require('./support/redis');
const { EXPRESS, listen, get } = require('./support/apps');

let redis;
test.before(async () => {
  redis = await startRedis();
});
test.after(async () => {
  await redis?.stop();
});

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const CLIENT = '127.0.0.1';
let made = 0;

/** `options` in process, or on Redis under a name of its own. */
function placed(where, options) {
  return where === 'on Redis' ? { ...options, redis: redis.url, name: `refund-${++made}` } : options;
}

/** An app with `middleware` in front of: `/` (200), `/fail` (500), `/bad` (400), `/teapot`
 * (418), `/hang` (never answers; `hung` resolves as it arrives) and `routes`' own. */
function app(express, middleware, routes = () => {}) {
  const a = express();
  let arrived;
  const hung = new Promise((resolve) => {
    arrived = resolve;
  });
  a.use(middleware);
  routes(a);
  a.get('/', (req, res) => res.send('ok'));
  a.get('/fail', (req, res) => res.status(500).send('failed'));
  a.get('/bad', (req, res) => res.status(400).send('bad'));
  a.get('/teapot', (req, res) => res.status(418).send('teapot'));
  a.get('/hang', () => arrived());
  return { app: a, hung };
}

/** The client's hits on `middleware` once they are `expected` (refunds land after the
 * response; on Redis, a round trip later), or what they are after 2 s. */
async function hits(middleware, expected, key = CLIENT) {
  const deadline = Date.now() + 2000;
  for (;;) {
    const found = (await middleware.getKey(key))?.totalHits ?? 0;
    if (found === expected || Date.now() > deadline) return found;
    await delay(5);
  }
}

/** The client's hits once anything that might still be given back had time to be. */
async function settledHits(middleware) {
  await delay(50);
  return (await middleware.getKey(CLIENT))?.totalHits ?? 0;
}

async function statuses(url, paths) {
  const found = [];
  for (const path of paths) found.push((await get(url, path)).status);
  return found;
}

for (const [label, express] of Object.entries(EXPRESS)) {
  for (const where of ['in process', 'on Redis']) {
    const named = (what) => `${label}, ${where}: ${what}`;

    test(named('skipFailedRequests gives failed requests back; successful ones count'), async () => {
      const middleware = rateLimit(placed(where, { quota: '2/hour', skipFailedRequests: true }));
      const server = await listen(app(express, middleware).app);
      try {
        for (const path of ['/fail', '/bad', '/fail', '/teapot', '/fail']) {
          assert.equal((await get(server.url, path)).status >= 400, true);
          assert.equal(await hits(middleware, 0), 0, `${path} was given back`);
        }
        assert.deepEqual(await statuses(server.url, ['/', '/']), [200, 200]);
        assert.equal(await settledHits(middleware), 2);
        // Refused: nothing was consumed, nothing is given back.
        assert.deepEqual(await statuses(server.url, ['/', '/fail']), [429, 429]);
        assert.equal(await settledHits(middleware), 2);
      } finally {
        await server.close();
      }
    });

    test(named('skipSuccessfulRequests gives successful requests back; failures count'), async () => {
      const middleware = rateLimit(placed(where, { quota: '2/hour', skipSuccessfulRequests: true }));
      const server = await listen(app(express, middleware).app);
      try {
        for (let i = 0; i < 4; i++) {
          assert.equal((await get(server.url, '/')).status, 200);
          assert.equal(await hits(middleware, 0), 0, 'given back');
        }
        assert.deepEqual(await statuses(server.url, ['/fail', '/bad']), [500, 400]);
        assert.equal(await settledHits(middleware), 2);
        assert.deepEqual(await statuses(server.url, ['/']), [429]);
      } finally {
        await server.close();
      }
    });

    test(named('an async requestWasSuccessful decides what is given back'), async () => {
      const judged = [];
      const middleware = rateLimit(placed(where, {
        quota: '3/hour',
        skipFailedRequests: true,
        requestWasSuccessful: async (req, res) => {
          await delay(10);
          judged.push(req.url);
          return res.statusCode !== 418 && req.query.outcome !== 'failed';
        },
      }));
      const server = await listen(app(express, middleware).app);
      try {
        assert.equal((await get(server.url, '/teapot')).status, 418);
        assert.equal(await hits(middleware, 0), 0, 'a 418 failed');
        assert.equal((await get(server.url, '/?outcome=failed')).status, 200);
        assert.equal(await hits(middleware, 0), 0, 'a 200 the function calls failed');
        assert.equal((await get(server.url, '/fail')).status, 500);
        assert.equal(await settledHits(middleware), 1, 'a 500 the function calls successful');
        assert.deepEqual(judged, ['/teapot', '/?outcome=failed', '/fail']);
      } finally {
        await server.close();
      }
    });

    test(named('a client that goes away before the response counts as failed'), async () => {
      for (const [option, given] of [['skipFailedRequests', true], ['skipSuccessfulRequests', false]]) {
        const middleware = rateLimit(placed(where, { quota: '3/hour', [option]: true }));
        const { app: a, hung } = app(express, middleware);
        const server = await listen(a);
        try {
          const request = http.get(`${server.url}/hang`, { agent: false });
          request.on('error', () => {}); // the socket we destroy
          await hung;
          assert.equal(await hits(middleware, 1), 1, 'counted while it is handled');
          request.destroy();
          if (given) assert.equal(await hits(middleware, 0), 0, `${option}: given back`);
          else assert.equal(await settledHits(middleware), 1, `${option}: stays counted`);
        } finally {
          await server.close();
        }
      }
    });

    test(named('a client that goes away while its decision is pending counts as failed'), async () => {
      let asked;
      const keyAsked = new Promise((resolve) => {
        asked = resolve;
      });
      let release;
      const released = new Promise((resolve) => {
        release = resolve;
      });
      const middleware = rateLimit(placed(where, {
        quota: '3/hour',
        skipFailedRequests: true,
        key: async () => {
          asked();
          await released;
          return 'slow';
        },
      }));
      const server = await listen(app(express, middleware).app);
      const before = refunds.size;
      try {
        const request = http.get(`${server.url}/`, { agent: false });
        request.on('error', () => {});
        await keyAsked;
        request.destroy();
        await delay(50); // the server sees the socket close before the key is known
        release();
        for (let waited = 0; refunds.size === before && waited < 2000; waited += 5) await delay(5);
        assert.equal(refunds.size, before + 1, 'decided after the client left, and given back');
        assert.equal(await hits(middleware, 0, 'slow'), 0);
      } finally {
        await server.close();
      }
    });

    test(named('a request is given back once, whatever events say it failed'), async () => {
      const before = refunds.size;
      const middleware = rateLimit(placed(where, { quota: '3/hour', skipFailedRequests: true }));
      const { app: a } = app(express, middleware, (routes) => {
        routes.get('/twice', (req, res) => {
          // A failed response ('finish' with 500) that also errs ('error').
          res.status(500).send('failed');
          res.emit('error', new Error('after the response'));
        });
      });
      const server = await listen(a);
      try {
        assert.equal((await get(server.url, '/')).status, 200);
        assert.equal((await get(server.url, '/twice')).status, 500);
        assert.equal(await hits(middleware, 1), 1);
        await delay(50);
        const asked = [...refunds].slice(before);
        assert.equal(asked.length, 1, 'one request was given back');
        assert.equal(asked[0][1], 1, 'and only once');
        // The native handle gives back once too.
        assert.equal(await realRefund(asked[0][0]), false);
        assert.equal(await settledHits(middleware), 1);
      } finally {
        await server.close();
      }
    });

    test(named('sign-in: count failures only (skipSuccessfulRequests), resetKey on success'), async () => {
      const signIn = rateLimit(placed(where, { quota: '3/hour', skipSuccessfulRequests: true }));
      const a = express();
      a.get('/login/form', signIn, (req, res) => res.send('the form'));
      a.get('/login', signIn, async (req, res) => {
        if (req.query.password !== 'right') return res.status(401).send('wrong password');
        await signIn.resetKey(req.rateLimit.key);
        res.send('welcome');
      });
      const server = await listen(a);
      const wrong = '/login?password=wrong';
      const right = '/login?password=right';
      try {
        for (let i = 0; i < 4; i++) {
          assert.equal((await get(server.url, '/login/form')).status, 200);
          assert.equal(await hits(signIn, 0), 0, 'a successful request does not count');
        }
        assert.deepEqual(await statuses(server.url, [wrong, wrong]), [401, 401]);
        assert.equal(await settledHits(signIn), 2);
        assert.deepEqual(await statuses(server.url, [right]), [200]);
        assert.equal(await hits(signIn, 0), 0, 'a success forgets the failures');
        assert.deepEqual(await statuses(server.url, [wrong, wrong, wrong, wrong, right]), [401, 401, 401, 429, 429]);
      } finally {
        await server.close();
      }
    });

    test(named('limit as a function: each tier gives back'), async () => {
      const middleware = rateLimit(placed(where, { windowMs: 3_600_000, limit: async () => 2, skipFailedRequests: true }));
      const server = await listen(app(express, middleware).app);
      try {
        assert.deepEqual(await statuses(server.url, ['/fail', '/fail', '/fail', '/', '/', '/']), [500, 500, 500, 200, 200, 429]);
      } finally {
        await server.close();
      }
    });
  }
}

test('without the options, requests are decided as before, with nothing kept', async () => {
  const before = refunds.size;
  const middleware = rateLimit({ quota: '2/hour' });
  const server = await listen(app(EXPRESS['express 5'], middleware).app);
  try {
    assert.deepEqual(await statuses(server.url, ['/fail', '/fail', '/fail']), [500, 500, 429]);
    assert.equal(refunds.size, before);
  } finally {
    await server.close();
  }
});

test('requestWasSuccessful judges passed requests only; one that throws keeps the request counted, with a warning', async () => {
  const judged = [];
  const middleware = rateLimit({
    quota: '1/hour',
    skipSuccessfulRequests: true,
    skip: (req) => req.url === '/skipped',
    requestWasSuccessful: (req) => {
      judged.push(req.url);
      if (req.url === '/fail') throw new Error('cannot tell');
      return true;
    },
  });
  const server = await listen(app(EXPRESS['express 5'], middleware, (routes) => {
    routes.get('/skipped', (req, res) => res.send('skipped'));
  }).app);
  const warned = new Promise((resolve) => process.once('warning', resolve));
  try {
    assert.deepEqual(await statuses(server.url, ['/skipped', '/', '/']), [200, 200, 200]);
    assert.equal(await hits(middleware, 0), 0);
    assert.equal((await get(server.url, '/fail')).status, 500);
    const warning = await warned;
    assert.equal(warning.code, 'SLUICEGATE_REQUEST_WAS_SUCCESSFUL');
    assert.match(warning.message, /cannot tell/);
    assert.equal(await settledHits(middleware), 1, 'counted');
    assert.deepEqual(await statuses(server.url, ['/', '/skipped']), [429, 200]);
    assert.deepEqual(judged, ['/', '/', '/fail']);
  } finally {
    await server.close();
  }
});
