'use strict';
// The README's fake-timer example (test/examples/fake-timers/), run by jest as a user runs
// their own tests: both of its tests pass.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { runJest } = require('./support/jest');

test("the README's jest example: a DateClock limit moves with jest's fake timers", { timeout: 120_000 }, () => {
  const { outcomes, messages } = runJest(path.join(__dirname, 'examples', 'fake-timers'), []);
  assert.equal(outcomes.size, 2);
  for (const [name, status] of outcomes) assert.equal(status, 'passed', `${name}\n${messages.get(name)}`);
});
