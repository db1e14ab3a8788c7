'use strict';
// @fastify/rate-limit's own tests (test/*.test.js but its Redis store's, copied under
// test/peer/fastify-rate-limit/test/ unchanged; their require('../index') reaches sluicegate's
// plugin), run by node's test runner as its authors run them. The tests that pass are listed;
// every other one must fail for one of the documented reasons (README.md, "@fastify/rate-limit's
// own tests"), matched on its failure message, so a test that starts passing, or fails for a
// new reason, fails this file.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { runNodeTests } = require('./support/node_test_peer');

const ROOT = path.join(__dirname, 'peer', 'fastify-rate-limit');
/** Tests in the copied files; skipped by their authors (`{ skip: true }`); passing here. */
const TOTAL = 98;
const SKIPPED = 1;
const PASSED = 80;

/** The tests that pass. */
const PASSING = new Set([
  "test/create-rate-limit.test.js > With allow list",
  "test/create-rate-limit.test.js > With custom rate limit options",
  "test/create-rate-limit.test.js > With global rate limit options",
  "test/create-rate-limit.test.js > With { increment: false } it reads the state without consuming it",
  "test/global-rate-limit.test.js > Basic",
  "test/global-rate-limit.test.js > Before async in \"max\"",
  "test/global-rate-limit.test.js > When passing NaN to the timeWindow property then the timeWindow should be the default value - 60 seconds",
  "test/global-rate-limit.test.js > With async/await function allowList",
  "test/global-rate-limit.test.js > With async/await keyGenerator",
  "test/global-rate-limit.test.js > With ban",
  "test/global-rate-limit.test.js > With enabled IETF Draft Spec",
  "test/global-rate-limit.test.js > With function allowList",
  "test/global-rate-limit.test.js > With function timeWindow",
  "test/global-rate-limit.test.js > With ips allowList",
  "test/global-rate-limit.test.js > With ips allowList, allowed ips should not result in rate limiting",
  "test/global-rate-limit.test.js > With ips allowList, not allowed ips should result in rate limiting",
  "test/global-rate-limit.test.js > With keyGenerator",
  "test/global-rate-limit.test.js > With onBanReach option",
  "test/global-rate-limit.test.js > With onExceeded option",
  "test/global-rate-limit.test.js > With onExceeding option",
  "test/global-rate-limit.test.js > With text timeWindow",
  "test/global-rate-limit.test.js > afterReset and Rate Limit remain the same when enableDraftSpec is enabled",
  "test/global-rate-limit.test.js > ban directly",
  "test/global-rate-limit.test.js > does not override the onRequest",
  "test/global-rate-limit.test.js > does not override the onRequest as an array",
  "test/global-rate-limit.test.js > exposeHeadRoutes",
  "test/global-rate-limit.test.js > hide IETF draft spec headers",
  "test/global-rate-limit.test.js > hide rate limit headers",
  "test/global-rate-limit.test.js > hide rate limit headers at all times",
  "test/global-rate-limit.test.js > hide rate limit headers on exceeding",
  "test/global-rate-limit.test.js > on preHandler hook",
  "test/global-rate-limit.test.js > stops fastify lifecycle after onRequest and before preValidation",
  "test/global-rate-limit.test.js > variable max",
  "test/global-rate-limit.test.js > variable max contenders",
  "test/global-rate-limit.test.js > when passing NaN to max variable then it should use the default max - 1000",
  "test/global-rate-limit.test.js > wrong timewindow",
  "test/group-rate-limit.test.js > GroupId from routeConfig",
  "test/group-rate-limit.test.js > GroupId from routeOptions",
  "test/group-rate-limit.test.js > Invalid groupId type",
  "test/group-rate-limit.test.js > No groupId provided",
  "test/group-rate-limit.test.js > With multiple routes and custom groupId",
  "test/ip-normalization.test.js > default keyGenerator uses configured ipv6Subnet",
  "test/local-store-close.test.js > Fastify close on local store",
  "test/not-found-handler-rate-limited.test.js > Set not found handler can be rate limited",
  "test/not-found-handler-rate-limited.test.js > Set not found handler can be rate limited with specific options",
  "test/route-rate-limit.test.js > Allow custom timeWindow in preHandler",
  "test/route-rate-limit.test.js > Allow multiple different rate limiter registrations",
  "test/route-rate-limit.test.js > Basic",
  "test/route-rate-limit.test.js > With NaN in subroute config",
  "test/route-rate-limit.test.js > With ban",
  "test/route-rate-limit.test.js > With enable IETF draft spec",
  "test/route-rate-limit.test.js > With function allowList",
  "test/route-rate-limit.test.js > With function timeWindow",
  "test/route-rate-limit.test.js > With ips allowList",
  "test/route-rate-limit.test.js > With keyGenerator",
  "test/route-rate-limit.test.js > With onExceeded option",
  "test/route-rate-limit.test.js > With onExceeding option",
  "test/route-rate-limit.test.js > With text timeWindow",
  "test/route-rate-limit.test.js > avoid double onRequest",
  "test/route-rate-limit.test.js > child's allowList function should not crash and should override parent",
  "test/route-rate-limit.test.js > child's allowList should not crash the app",
  "test/route-rate-limit.test.js > custom error response",
  "test/route-rate-limit.test.js > does not override onRequest",
  "test/route-rate-limit.test.js > global timeWindow when not set in routes",
  "test/route-rate-limit.test.js > hide rate limit headers",
  "test/route-rate-limit.test.js > hide rate limit headers at all times",
  "test/route-rate-limit.test.js > hide rate limit headers on exceeding",
  "test/route-rate-limit.test.js > no rate limit with bad rate-limit parameters",
  "test/route-rate-limit.test.js > no rate limit without settings",
  "test/route-rate-limit.test.js > on preValidation hook",
  "test/route-rate-limit.test.js > on rateLimitHook should not be set twice on HEAD",
  "test/route-rate-limit.test.js > on undefined hook should use onRequest-hook",
  "test/route-rate-limit.test.js > onExceeding and onExceeded events",
  "test/route-rate-limit.test.js > per route rate limit",
  "test/route-rate-limit.test.js > rateLimit decorator should work when a property other than timeWindow is modified",
  "test/route-rate-limit.test.js > route can disable the global limit",
  "test/route-rate-limit.test.js > should consider routes allow list",
  "test/route-rate-limit.test.js > stops fastify lifecycle after onRequest and before preValidation",
  "test/route-rate-limit.test.js > variable max contenders",
  "test/route-rate-limit.test.js > works with existing route config",
]);

/** Why the others fail: the README's reasons, each recognized by its failure message, and
 * how many tests fail for it. */
const REASONS = [
  ['a custom `store`', /`store` \(@fastify\/rate-limit\) has no counterpart/, 4],
  ['`continueExceeding`: a refused request consumes nothing in the engine', /`continueExceeding` \(@fastify\/rate-limit\) has no counterpart/, 6],
  ['`exponentialBackoff`: the engine\'s windows do not grow', /`exponentialBackoff` \(@fastify\/rate-limit\) has no counterpart/, 3],
  ['mock timers left on by the test before it, which failed at register (`continueExceeding`)', /MockTimers is already enabled/, 1],
  ["@fastify/rate-limit's own `normalizeIP` export", /normalizeIP is not a function/, 1],
  ["fastify's `trustProxy` is not read: X-Forwarded-For counts only through `trustedProxies`", /429 !== 200/, 2],
];

function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.test.js') ? [path.join(dir, e.name)] : []));
}

test("@fastify/rate-limit's own tests: those listed pass, the rest fail for a documented reason", { timeout: 200_000 }, () => {
  const { outcomes, messages } = runNodeTests(files(path.join(ROOT, 'test')).sort(), ROOT);
  assert.equal(outcomes.size, TOTAL, `the copied files have ${TOTAL} tests`);
  for (const name of PASSING) assert.ok(outcomes.has(name), `no test named ${name}`);
  const counted = new Map(REASONS.map(([reason]) => [reason, 0]));
  for (const [name, status] of outcomes) {
    if (PASSING.has(name)) {
      assert.equal(status, 'passed', `${name}: ${status}\n${messages.get(name)}`);
      continue;
    }
    if (status === 'skipped') continue;
    assert.equal(status, 'failed', `${name} now passes: list it`);
    const reason = REASONS.find(([, pattern]) => pattern.test(messages.get(name)));
    assert.ok(reason, `${name} fails for no documented reason:\n${messages.get(name)}`);
    counted.set(reason[0], counted.get(reason[0]) + 1);
  }
  for (const [reason, , expected] of REASONS) assert.equal(counted.get(reason), expected, `tests failing for: ${reason}`);
  assert.equal([...outcomes.values()].filter((s) => s === 'skipped').length, SKIPPED, 'skipped by their authors');
  assert.equal(PASSING.size, PASSED);
});
