'use strict';
// Every trace of the Rust engine's answers replayed through Limiter (unkeyed traces) and
// KeyedLimiter (keyed ones): the same allowed / limit / remaining, the same times within
// 1 ns, the same capacity errors.

const test = require('node:test');
const assert = require('node:assert/strict');
const { Limiter, KeyedLimiter, ManualClock } = require('..');
const { traces, assertSame } = require('./support/traces');

const all = traces();

test('the trace file holds every algorithm, keyed and not, and anchored fixed windows', () => {
  const kinds = new Set(all.map((t) => `${t.algorithm}/${t.keyed}`));
  assert.equal(kinds.size, 12);
  assert.equal(all.length, 54);
  assert.equal(all.filter((t) => t.quota.endsWith(' anchored')).length, 6);
});

for (const trace of all) {
  const name = `${trace.algorithm} "${trace.quota}" ${trace.keyed ? 'KeyedLimiter' : 'Limiter'}: the engine's answers`;
  test(name, () => {
    const clock = new ManualClock();
    const options = { quota: trace.quota, algorithm: trace.algorithm, clock };
    const limiter = trace.keyed ? new KeyedLimiter(options) : new Limiter(options);
    trace.steps.forEach((step, i) => {
      clock.set(step.at_us / 1000);
      const where = `step ${i} (${step.op} cost ${step.cost} at ${step.at_us} us)`;
      const run = () =>
        trace.keyed ? limiter[step.op](step.key, step.cost) : limiter[step.op](step.cost);
      if (step.expect.error === 'capacity') {
        assert.throws(run, (e) => e instanceof RangeError && /can never be admitted/.test(e.message), where);
        return;
      }
      assertSame(run(), step.expect, where);
    });
  });
}
