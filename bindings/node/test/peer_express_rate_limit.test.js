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
  'middleware-test.ts > middleware test should let the first request through',
  'middleware-test.ts > middleware test should refuse additional connections once IP has reached the max',
  'middleware-test.ts > middleware test should show the provided message instead of the default message when max connections are reached',
  'middleware-test.ts > middleware test should allow the error status code to be customized',
  'middleware-test.ts > middleware test should allow responding with a JSON message',
  'middleware-test.ts > middleware test should allow message to be a function',
  'middleware-test.ts > middleware test should allow message to be a function that returns a promise',
  'middleware-test.ts > middleware test should use a custom handler when specified',
  'middleware-test.ts > middleware test should allow custom key generators',
  'middleware-test.ts > middleware test should allow custom skip function',
  'middleware-test.ts > middleware test should allow custom skip function that returns a promise',
  'middleware-test.ts > middleware test should allow max to be a function',
  'middleware-test.ts > middleware test should allow max to be a function that returns a promise',
  'middleware-test.ts > middleware test should pass the number of hits and the limit to the next request handler in the `request.rateLimit` property',
  'middleware-test.ts > middleware test should handle two rate-limiters with different `requestPropertyNames` operating independently',
  'headers-test.ts > headers test ratelimit-header-parser compatibility should emit legacy headers that ratelimit-header-parser can read',
  'options-test.ts > options test should not allow the use of an invalid store',
  'options-test.ts > options test should not call `init` if it is not a function',
  'options-test.ts > options test should not allow an invalid logger implemenation to be provided',
]);

/** Why the others fail: the README's reasons, each recognized by its failure message. */
const REASONS = [
  ['a custom `store`', /`store` \(express-rate-limit\) has no counterpart/],
  ['skipFailedRequests / skipSuccessfulRequests', /`skip(Failed|Successful)Requests` \(express-rate-limit\) has no counterpart/],
  ["standardHeaders 'draft-6' / 'draft-7' / 'draft-8' forms", /`standardHeaders` is true, false or 'draft-10'|"ratelimit-policy" of "5;w=60"/],
  ['a `logger`', /`logger` \(express-rate-limit\) has no counterpart/],
  ["no options: express-rate-limit's defaults", /give `limits`, or one limit's `quota`|takes an options object/],
  ['`max: 0`', /a quota's limit must be at least 1 request/],
  ["fixed windows at the clock's edges", /expected "retry-after" of "60"|Received: "\d+"|Expected: >= \d{10}|expected 429 "Too Many Requests", got 200|expected 200 "OK", got 429/],
  ['legacy headers off by default', /expected "x-ratelimit-limit" header field/],
  ["express-rate-limit's internals", /headers_js_1\.\w+\) is not a function/],
];

test("express-rate-limit's own middleware tests: those listed pass, the rest fail for a documented reason", { timeout: 200_000 }, () => {
  const { outcomes, messages } = runJest(path.join(__dirname, 'peer', 'express-rate-limit'), null);
  assert.equal(outcomes.size, 104, 'headers, middleware and options have 104 tests');
  for (const name of PASSING) assert.ok(outcomes.has(name), `no test named ${name}`);
  for (const [name, status] of outcomes) {
    if (PASSING.has(name)) {
      assert.equal(status, 'passed', `${name}: ${status}\n${messages.get(name)}`);
      continue;
    }
    assert.equal(status, 'failed', `${name} now passes: list it`);
    const reason = REASONS.find(([, pattern]) => pattern.test(messages.get(name)));
    assert.ok(reason, `${name} fails for no documented reason:\n${messages.get(name)}`);
  }
  assert.equal(PASSING.size, 19);
});
