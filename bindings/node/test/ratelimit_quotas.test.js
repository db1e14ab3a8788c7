'use strict';
// Several quotas in one string (`'1/second; 2/hour'`, as `limits`, slowapi and flask-limiter
// write them): the library reads the string, and rateLimit makes one limit of each quota,
// named NAME-1, NAME-2..., decided all-or-nothing, as the Python middlewares do.

const test = require('node:test');
const assert = require('node:assert/strict');
const { setTimeout: sleep } = require('node:timers/promises');
const express = require('express');
const { rateLimit } = require('..');
const { expressApp, listen, get } = require('./support/apps');

test('several quotas in one string are one limit each, all-or-nothing: a refusal by one consumes nothing of the other', async () => {
  const server = await listen(expressApp(express, rateLimit({ quota: '1/second; 2/hour' })));
  try {
    const first = await get(server.url);
    assert.equal(first.status, 200);
    assert.equal(first.headers['ratelimit-policy'], '"ip-1";q=1;w=1, "ip-2";q=2;w=3600');
    for (let i = 0; i < 4; i++) {
      const refused = await get(server.url);
      assert.equal(refused.status, 429);
      assert.match(refused.headers.ratelimit, /^"ip-1";r=0;t=1$/);
    }
    await sleep(1100);
    // The four refusals took nothing of the hourly quota: its second request is still there.
    const second = await get(server.url);
    assert.equal(second.status, 200);
    assert.match(second.headers.ratelimit, /^"ip-2";r=0;t=\d+$/);
    await sleep(1100);
    const third = await get(server.url);
    assert.equal(third.status, 429);
    assert.match(third.headers.ratelimit, /^"ip-2";r=0;t=\d+$/);
  } finally {
    await server.close();
  }
});

test('in `limits`, with a key function: every part keyed alike; a bad part names its limit', async () => {
  const middleware = rateLimit({
    limits: [{ name: 'user', key: (req) => req.headers['x-user'], quota: '1/minute | 10/day' }],
  });
  const server = await listen(expressApp(express, middleware));
  try {
    const alice = await get(server.url, '/', { 'x-user': 'alice' });
    assert.equal(alice.status, 200);
    assert.equal(alice.headers['ratelimit-policy'], '"user-1";q=1;w=60, "user-2";q=10;w=86400');
    assert.equal((await get(server.url, '/', { 'x-user': 'alice' })).status, 429);
    assert.equal((await get(server.url, '/', { 'x-user': 'bob' })).status, 200, 'another key');
    assert.equal(await middleware.resetKey('alice'), true, 'forgotten in every part');
    assert.equal((await get(server.url, '/', { 'x-user': 'alice' })).status, 200);
  } finally {
    await server.close();
  }
  assert.throws(() => rateLimit({ quota: '5/minute; 0/hour' }), { name: 'RangeError', message: /^limit "ip": / });
  assert.throws(() => rateLimit({ limits: [{ name: 'a', quota: '5/minute; 5/hour' }, { name: 'a-2', quota: '1/s' }] }), { message: /two limits are named "a-2"/ });
});
