'use strict';
// Unnamed route limits on Redis get names from their route, so that counters never collide:
// two `rateLimit({ quota, redis })` on two express routes count apart on Redis as they do in
// process (the FastAPI bug, where adding `redis` silently made two routes share one counter),
// while every process serving one route shares its counter. In process each has its own
// tables, and keeps its key's name. Real express 4 and 5, real redis-server.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const { rateLimit } = require('..');
const { EXPRESS, listen, get } = require('./support/apps');
const { startRedis } = require('./support/redis');

let redis;
test.before(async () => {
  redis = await startRedis();
});
test.after(() => redis?.stop());

/** An app with an unnamed limit of `options` on POST-less GET routes /login and /signup
 * (each its own middleware), a router mounted at /api with one, and one app-wide. */
function app(express, options) {
  const a = express();
  const login = rateLimit(options);
  const signup = rateLimit(options);
  a.get('/login', login, (req, res) => res.send('login'));
  a.get('/signup', signup, (req, res) => res.send('signup'));
  const api = express.Router();
  const mounted = rateLimit(options);
  api.use(mounted);
  api.get('/items/:id', (req, res) => res.send('item'));
  a.use('/api', api);
  return { app: a, login, signup, mounted };
}

/** The Redis keys of HTTP limits named `name`. */
function keysOf(name) {
  const out = spawnSync('redis-cli', ['-p', String(redis.port), '--scan', '--pattern', `sluicegate:http:${name}:*`], { encoding: 'utf8' });
  return out.stdout.split('\n').filter(Boolean);
}

for (const [label, express] of Object.entries(EXPRESS)) {
  for (const where of ['in process', 'on Redis']) {
    test(`${label}, ${where}: two unnamed route limits count apart${where === 'on Redis' ? ', named after their routes' : ''}`, async () => {
      const quota = '2/minute';
      const options = where === 'on Redis' ? { quota, redis: redis.url } : { quota };
      spawnSync('redis-cli', ['-p', String(redis.port), 'FLUSHALL']);
      const { app: a, login, signup, mounted } = app(express, options);
      const server = await listen(a);
      try {
        const logins = [await get(server.url, '/login'), await get(server.url, '/login'), await get(server.url, '/login')];
        assert.deepEqual(logins.map((r) => r.status), [200, 200, 429]);
        const signupAnswer = await get(server.url, '/signup');
        assert.equal(signupAnswer.status, 200, 'the signup route has its own count');
        assert.equal((await get(server.url, '/api/items/7')).status, 200);
        if (where === 'in process') {
          assert.equal(signupAnswer.headers['ratelimit-policy'], '"ip";q=2;w=60');
          assert.deepEqual([login.names, signup.names, mounted.names], [['ip'], ['ip'], ['ip']]);
        } else {
          assert.equal(signupAnswer.headers['ratelimit-policy'], '"GET /signup";q=2;w=60');
          assert.deepEqual([login.names, signup.names, mounted.names], [['GET /login'], ['GET /signup'], ['/api']]);
          assert.equal(keysOf('GET /login').length, 1);
          assert.equal(keysOf('GET /signup').length, 1);
          assert.equal(keysOf('/api').length, 1);
          // Another process serving the same route (another app, another middleware) shares its counter.
          const { app: twin } = app(express, options);
          const other = await listen(twin);
          try {
            assert.equal((await get(other.url, '/login')).status, 429);
            assert.equal((await get(other.url, '/signup')).status, 200);
          } finally {
            await other.close();
          }
        }
      } finally {
        await server.close();
      }
    });
  }

  test(`${label}: on Redis, an app-wide unnamed limit, and a named one, keep their names`, async () => {
    const a = express();
    const everywhere = rateLimit({ quota: '5/minute', redis: redis.url });
    const named = rateLimit({ name: 'sign-in', quota: '5/minute', redis: redis.url });
    a.use(everywhere);
    a.get('/login', named, (req, res) => res.send('ok'));
    const server = await listen(a);
    try {
      const answer = await get(server.url, '/login');
      assert.equal(answer.status, 200);
      assert.deepEqual([everywhere.names, named.names], [['ip'], ['sign-in']]);
    } finally {
      await server.close();
    }
  });
}

test('a route name longer than 64 characters keeps its start and a hash of the whole', async () => {
  const express = EXPRESS['express 5'];
  const a = express();
  const path = `/${'segment/'.repeat(10)}:id`;
  const limiter = rateLimit({ quota: '5/minute', redis: redis.url });
  a.get(path, limiter, (req, res) => res.send('ok'));
  const server = await listen(a);
  try {
    assert.equal((await get(server.url, `/${'segment/'.repeat(10)}7`)).status, 200);
    const [name] = limiter.names;
    assert.equal(name.length, 64);
    assert.ok(name.startsWith('GET /segment/segment/'), name);
    assert.match(name, /~[0-9a-f]{8}$/);
  } finally {
    await server.close();
  }
});
