'use strict';
// `sluicegate/nestjs` in a real NestJS app (express platform) over real HTTP on 127.0.0.1:
// @nestjs/throttler's module, guard and decorators, deciding through the library. Plain
// JavaScript: the decorators are applied as TypeScript would apply them.

require('reflect-metadata');
const test = require('node:test');
const assert = require('node:assert/strict');
const { Controller, Get, Injectable, Module, UseGuards } = require('@nestjs/common');
const { NestFactory, APP_GUARD } = require('@nestjs/core');
const { ThrottlerModule, ThrottlerGuard, Throttle, SkipThrottle } = require('sluicegate/nestjs');
const { get } = require('./support/apps');

/** Applies method decorators to `Class.prototype[name]`, as `@A() @B() name() {}` does. */
function decorate(Class, name, ...decorators) {
  const descriptor = Object.getOwnPropertyDescriptor(Class.prototype, name);
  for (const d of decorators.reverse()) d(Class.prototype, name, descriptor);
}

class CatsController {
  list() {
    return 'cats';
  }

  tight() {
    return 'tight';
  }

  free() {
    return 'free';
  }
}
Controller('cats')(CatsController);
decorate(CatsController, 'list', Get());
decorate(CatsController, 'tight', Throttle({ default: { limit: 1, ttl: 60_000 } }), Get('tight'));
decorate(CatsController, 'free', SkipThrottle(), Get('free'));

/** Serves a module importing `throttler` with CatsController and `guard` as the app's guard, for `fn(url)`. */
async function serving(throttler, guard, fn) {
  class AppModule {}
  Module({ imports: [throttler], controllers: [CatsController], providers: [{ provide: APP_GUARD, useClass: guard }] })(AppModule);
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  try {
    await fn(`http://127.0.0.1:${app.getHttpServer().address().port}`);
  } finally {
    await app.close();
  }
}

test("forRoot's throttlers, @Throttle and @SkipThrottle; the library's headers and a ThrottlerException", async () => {
  await serving(ThrottlerModule.forRoot([{ ttl: 60_000, limit: 2 }]), ThrottlerGuard, async (url) => {
    const first = await get(url, '/cats');
    assert.equal(first.status, 200);
    assert.equal(first.body, 'cats');
    assert.equal(first.headers['x-ratelimit-limit'], '2');
    assert.equal(first.headers['x-ratelimit-remaining'], '1');
    assert.equal(first.headers['ratelimit-policy'], '"default";q=2;w=60');
    assert.equal((await get(url, '/cats')).status, 200);
    const refused = await get(url, '/cats');
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '60');
    assert.deepEqual(JSON.parse(refused.body), { statusCode: 429, message: 'ThrottlerException: Too Many Requests' });
    // Each route counts apart; @Throttle overrides the limit; @SkipThrottle is not limited.
    assert.equal((await get(url, '/cats/tight')).status, 200);
    assert.equal((await get(url, '/cats/tight')).status, 429);
    for (let i = 0; i < 4; i++) assert.equal((await get(url, '/cats/free')).status, 200);
  });
});

test('several named throttlers are decided all-or-nothing; the tightest is reported', async () => {
  const throttlers = ThrottlerModule.forRoot([{ name: 'short', ttl: 60_000, limit: 3 }, { name: 'long', ttl: 3_600_000, limit: 2 }]);
  await serving(throttlers, ThrottlerGuard, async (url) => {
    const first = await get(url, '/cats');
    assert.equal(first.headers['ratelimit-policy'], '"short";q=3;w=60, "long";q=2;w=3600');
    assert.equal(first.headers['x-ratelimit-limit'], '2');
    assert.equal((await get(url, '/cats')).status, 200);
    const refused = await get(url, '/cats');
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['x-ratelimit-limit'], '2', 'the long limit refused');
  });
});

test('a guard overriding getTracker keys requests its way; the default is the peer, not X-Forwarded-For', async () => {
  class UserGuard extends ThrottlerGuard {
    async getTracker(req) {
      return req.headers['x-user'];
    }
  }
  Injectable()(UserGuard);
  await serving(ThrottlerModule.forRoot([{ ttl: 60_000, limit: 1 }]), UserGuard, async (url) => {
    assert.equal((await get(url, '/cats', { 'x-user': 'a' })).status, 200);
    assert.equal((await get(url, '/cats', { 'x-user': 'a' })).status, 429);
    assert.equal((await get(url, '/cats', { 'x-user': 'b' })).status, 200);
  });
  await serving(ThrottlerModule.forRoot([{ ttl: 60_000, limit: 1 }]), ThrottlerGuard, async (url) => {
    assert.equal((await get(url, '/cats', { 'x-forwarded-for': '203.0.113.1' })).status, 200);
    assert.equal((await get(url, '/cats', { 'x-forwarded-for': '203.0.113.2' })).status, 429);
  });
});

test("@nestjs/throttler's storage and blockDuration are refused", () => {
  assert.throws(() => ThrottlerModule.forRoot({ throttlers: [{ ttl: 1000, limit: 1 }], storage: {} }), /`storage` \(@nestjs\/throttler\) has no counterpart/);
  assert.throws(() => ThrottlerModule.forRoot([{ ttl: 1000, limit: 1, blockDuration: 5000 }]), /`blockDuration` has no counterpart/);
  void UseGuards;
});
