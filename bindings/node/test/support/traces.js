'use strict';
// The Rust engine's answers on fixed traces (tests/traces/decisions.json, kept equal to the
// engine by tests/binding_traces.rs), and how to compare a decision with one of them.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const FILE = path.resolve(__dirname, '..', '..', '..', '..', 'tests', 'traces', 'decisions.json');

function traces() {
  return JSON.parse(fs.readFileSync(FILE, 'utf8')).traces;
}

/**
 * Asserts that `d` (a decision, times in ms) is the trace's `expect` (times in ns), times
 * equal within `tolerance` ns.
 */
function assertSame(d, expect, where, tolerance = 1) {
  assert.equal(d.allowed, expect.allowed, `${where}: allowed`);
  assert.equal(d.limit, expect.limit, `${where}: limit`);
  assert.equal(d.remaining, expect.remaining, `${where}: remaining`);
  if (expect.retry_after_ns === null) {
    assert.equal(d.retryAfter, null, `${where}: retryAfter`);
  } else {
    near(d.retryAfter, expect.retry_after_ns, tolerance, `${where}: retryAfter`);
  }
  near(d.resetAfter, expect.reset_after_ns, tolerance, `${where}: resetAfter`);
  near(d.wait, expect.wait_ns, tolerance, `${where}: wait`);
}

function near(ms, ns, tolerance, what) {
  assert.equal(typeof ms, 'number', `${what} is a number`);
  const off = Math.abs(ms * 1e6 - ns);
  assert.ok(off <= tolerance, `${what}: ${ms} ms is ${off} ns from the engine's ${ns} ns (tolerance ${tolerance} ns)`);
}

module.exports = { traces, assertSame, FILE };
