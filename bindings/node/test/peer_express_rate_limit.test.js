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
  'options-test.ts > options test should allow an empty options object',
  'middleware-test.ts > middleware test should pass the number of hits and the limit to the next request handler with a custom property',
  'middleware-test.ts > middleware test should not modify the options object passed',
  'headers-test.ts > headers test ratelimit-header-parser compatibility should emit a standard draft 7 combined header that ratelimit-header-parser can parse',
  'headers-test.ts > headers test ratelimit-header-parser compatibility should emit legacy headers that ratelimit-header-parser can read',
  'headers-test.ts > headers test ratelimit-header-parser compatibility should emit standard draft-6 headers that ratelimit-header-parser can read',
  'headers-test.ts > headers test should not set the `retry-after` header if all headers have been disabled',
  'headers-test.ts > headers test should return the `retry-after` header once IP has reached the max',
  'headers-test.ts > headers test should send correct `ratelimit-*` headers for the standard headers draft 6',
  'headers-test.ts > headers test should send correct `x-ratelimit-limit`, `x-ratelimit-remaining`, and `x-ratelimit-reset` headers',
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
  'middleware-test.ts > middleware test should handle two rate-limiters with different `requestPropertyNames` operating independently',
  'middleware-test.ts > middleware test should let the first request through',
  'middleware-test.ts > middleware test should pass the number of hits and the limit to the next request handler in the `request.rateLimit` property',
  'middleware-test.ts > middleware test should refuse additional connections once IP has reached the max',
  'middleware-test.ts > middleware test should show the provided message instead of the default message when max connections are reached',
  'middleware-test.ts > middleware test should use a custom handler when specified',
  'options-test.ts > options test should not allow an invalid logger implemenation to be provided',
  'options-test.ts > options test should not allow the use of an invalid store',
  'options-test.ts > options test should not call `init` if it is not a function',
]);

/** jest's fake timers move JavaScript's clock, not the engine's. */
const FAKE_TIMERS = "jest's fake timers";

/** Why the others fail: the README's reasons, each recognized by its failure message. */
const REASONS = [
  ['a custom `store`', /`store` \(express-rate-limit\) has no counterpart/],
  ["draft-8's partition keys and express-rate-limit's quota names", /"ratelimit-policy" of ""[^"]+"; q=/],
  ['an unknown draft is a TypeError', /got "(invalid-draft|not-a-valid-draft)"/],
  ['a `logger`', /`logger` \(express-rate-limit\) has no counterpart/],
  [FAKE_TIMERS, /expected 200 "OK", got 429/],
  ['legacy headers off by default', /expected "x-ratelimit-limit" header field/],
  ["express-rate-limit's internals", /headers_js_1\.\w+\) is not a function/],
];

test("express-rate-limit's own middleware tests: those listed pass, the rest fail for a documented reason", { timeout: 200_000 }, () => {
  const { outcomes, messages } = runJest(path.join(__dirname, 'peer', 'express-rate-limit'), null);
  assert.equal(outcomes.size, 104, 'headers, middleware and options have 104 tests');
  for (const name of PASSING) assert.ok(outcomes.has(name), `no test named ${name}`);
  for (const [name, status] of outcomes) {
    const reason = REASONS.find(([, pattern]) => pattern.test(messages.get(name)));
    if (PASSING.has(name)) {
      assert.equal(status, 'passed', `${name}: ${status}\n${messages.get(name)}`);
      continue;
    }
    assert.equal(status, 'failed', `${name} now passes: list it`);
    assert.ok(reason, `${name} fails for no documented reason:\n${messages.get(name)}`);
  }
  assert.equal(PASSING.size, 30);
});
