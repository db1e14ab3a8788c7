'use strict';
// The adapters' entry points, through the package's `exports` map, from CommonJS and ESM, in
// the forms their users write (`require('sluicegate/fastify')`, `import { rateLimiter } from
// 'sluicegate/hono'`, ...).

const test = require('node:test');
const assert = require('node:assert/strict');

test('require and import reach each adapter by its documented names', async () => {
  const forms = {
    'sluicegate/fastify': ['default', 'fastifyRateLimit'],
    'sluicegate/koa': ['default', 'ratelimit'],
    'sluicegate/hono': ['default', 'rateLimiter'],
    'sluicegate/nestjs': ['ThrottlerModule', 'ThrottlerGuard', 'Throttle', 'SkipThrottle', 'ThrottlerException'],
  };
  for (const [entry, names] of Object.entries(forms)) {
    const cjs = require(entry);
    const esm = await import(entry);
    for (const name of names) {
      assert.equal(typeof esm[name], 'function', `import { ${name} } from '${entry}'`);
      if (name !== 'default') assert.equal(cjs[name], esm[name], `${entry}: require and import agree on ${name}`);
    }
  }
  // The plugin and middleware factories are the modules themselves, as their peers' are.
  assert.equal(typeof require('sluicegate/fastify'), 'function');
  assert.equal(typeof require('sluicegate/koa'), 'function');
  assert.equal(typeof (await import('sluicegate')).requestDecider, 'function');
  assert.throws(() => require('sluicegate/lib/koa.js'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
});
