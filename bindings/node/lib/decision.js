'use strict';
// A decision as JavaScript sees it. The native side writes a check's numbers into one
// Float64Array per thread (no object built through Node-API, which measured slower: see
// BENCHMARKS.md) and returns whether it allowed; `decision` copies them into a plain object
// right away, before the next check overwrites them.

// Slots, in the order src/out.rs writes them.
const LIMIT = 0;
const REMAINING = 1;
const RETRY_AFTER = 2;
const RESET_AFTER = 3;
const WAIT = 4;
const REASON = 5;
/** REASON's value for a new key denied by a table full of active keys (`maxKeys`). */
const TABLE_FULL = 2;

/** The array every native limiter of this thread writes into. */
const OUT = new Float64Array(6);

/**
 * The decision just written into `OUT`: `{ allowed, limit, remaining, retryAfter, resetAfter,
 * wait }`, times in milliseconds, `retryAfter` null when allowed; a denial by a full table
 * also has `reason: 'table-full'`.
 */
function decision(allowed) {
  const d = {
    allowed,
    limit: OUT[LIMIT],
    remaining: OUT[REMAINING],
    retryAfter: allowed ? null : OUT[RETRY_AFTER],
    resetAfter: OUT[RESET_AFTER],
    wait: OUT[WAIT],
  };
  // A new key refused because the table is full (`maxKeys`): a finite retry (the engine's
  // one second, as the HTTP layer's `Retry-After: 1`) and the reason, to tell it apart.
  if (!allowed && OUT[REASON] === TABLE_FULL) d.reason = 'table-full';
  return d;
}

module.exports = { OUT, decision };
