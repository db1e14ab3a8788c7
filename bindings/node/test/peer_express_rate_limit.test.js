'use strict';
// express-rate-limit's own middleware tests (headers, middleware, options: copied under
// test/peer/express-rate-limit/test/library/, unchanged; their imports of ../../source/ reach
// a module that re-exports sluicegate's `rateLimit` alone), run by jest as its authors run
// them. The tests that pass are listed; every other one must fail for one of the documented
// reasons (README.md, "express-rate-limit's own tests"), matched on its failure message, so
// a test that starts passing, or fails for a new reason, fails this file.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { runJest } = require('./support/jest');

/** The tests that pass. */
const PASSING = new Set([
  'headers-test.ts > headers test ratelimit-header-parser compatibility should emit a standard draft 7 combined header that ratelimit-header-parser can parse',
  'headers-test.ts > headers test ratelimit-header-parser compatibility should emit legacy headers that ratelimit-header-parser can read',
  'headers-test.ts > headers test ratelimit-header-parser compatibility should emit standard draft-6 headers that ratelimit-header-parser can read',
  'headers-test.ts > headers test should not send headers for an incorrect draft number',
  'headers-test.ts > headers test should not set the `retry-after` header if all headers have been disabled',
  'headers-test.ts > headers test should override the quota name if specified for the standard draft 8',
  'headers-test.ts > headers test should return the `retry-after` header once IP has reached the max',
  'headers-test.ts > headers test should send correct `ratelimit-*` headers for the standard headers draft 6',
  'headers-test.ts > headers test should send correct `x-ratelimit-limit`, `x-ratelimit-remaining`, and `x-ratelimit-reset` headers',
  'headers-test.ts > headers test should send correct headers for the standard draft 8',
  'headers-test.ts > headers test should send multiple headers correctly for the standard draft 8',
  'headers-test.ts > headers test should send policy and combined ratelimit headers for the standard draft 7',
  'middleware-test.ts > middleware test should allow custom key generators',
  'middleware-test.ts > middleware test should allow custom skip function',
  'middleware-test.ts > middleware test should allow custom skip function that returns a promise',
  'middleware-test.ts > middleware test should allow max to be a function',
  'middleware-test.ts > middleware test should allow max to be a function that returns a promise',
  'middleware-test.ts > middleware test should allow message to be a function',
  'middleware-test.ts > middleware test should allow message to be a function that returns a promise',
  'middleware-test.ts > middleware test should allow responding with a JSON message',
  'middleware-test.ts > middleware test should allow the error status code to be customized',
  'middleware-test.ts > middleware test should block all requests if max is set to 0',
  'middleware-test.ts > middleware test should calculate the remaining hits',
  'middleware-test.ts > middleware test should handle two rate-limiters with different `requestPropertyNames` operating independently',
  'middleware-test.ts > middleware test should let the first request through',
  'middleware-test.ts > middleware test should not modify the options object passed',
  'middleware-test.ts > middleware test should pass the number of hits and the limit to the next request handler in the `request.rateLimit` property',
  'middleware-test.ts > middleware test should pass the number of hits and the limit to the next request handler with a custom property',
  'middleware-test.ts > middleware test should refuse additional connections once IP has reached the max',
  'middleware-test.ts > middleware test should show the provided message instead of the default message when max connections are reached',
  'middleware-test.ts > middleware test should use a custom handler when specified',
  'options-test.ts > options test should allow an empty options object',
  'options-test.ts > options test should not allow an invalid logger implemenation to be provided',
  'options-test.ts > options test should not allow an invalid standardHeaders option',
  'options-test.ts > options test should not allow the use of an invalid store',
  'options-test.ts > options test should not call `init` if it is not a function',
]);

/** Why the others fail: the README's reasons, each recognized by its failure message, and
 * how many tests fail for it. */
const REASONS = [
  ['a custom `store`', /`store` \(express-rate-limit\) has no counterpart/, 64],
  ["jest's fake timers move Date.now(), not the engine's default clock", /expected 200 "OK", got 429/, 2],
  ['a bad option throws where express-rate-limit logs a validation error', /`ipv6Subnet` must be a whole number/, 1],
  ["express-rate-limit's internals", /headers_js_1\.\w+\) is not a function/, 1],
];

test("express-rate-limit's own middleware tests: those listed pass, the rest fail for a documented reason", { timeout: 200_000 }, () => {
  const { outcomes, messages } = runJest(path.join(__dirname, 'peer', 'express-rate-limit'), null);
  assert.equal(outcomes.size, 104, 'headers, middleware and options have 104 tests');
  for (const name of PASSING) assert.ok(outcomes.has(name), `no test named ${name}`);
  const counted = new Map(REASONS.map(([reason]) => [reason, 0]));
  for (const [name, status] of outcomes) {
    if (PASSING.has(name)) {
      assert.equal(status, 'passed', `${name}: ${status}\n${messages.get(name)}`);
      continue;
    }
    assert.equal(status, 'failed', `${name} now passes: list it`);
    const reason = REASONS.find(([, pattern]) => pattern.test(messages.get(name)));
    assert.ok(reason, `${name} fails for no documented reason:\n${messages.get(name)}`);
    counted.set(reason[0], counted.get(reason[0]) + 1);
  }
  for (const [reason, , expected] of REASONS) assert.equal(counted.get(reason), expected, `tests failing for: ${reason}`);
  // Of the 38 that need neither a custom store nor its internals nor its validation logger,
  // all pass but the two that move Date.now() with jest's fake timers.
  assert.equal(PASSING.size, 36);
});
