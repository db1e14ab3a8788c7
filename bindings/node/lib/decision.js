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

/** The array every native limiter of this thread writes into. */
const OUT = new Float64Array(5);

/**
 * The decision just written into `OUT`: `{ allowed, limit, remaining, retryAfter, resetAfter,
 * wait }`, times in milliseconds, `retryAfter` null when allowed.
 */
function decision(allowed) {
  return {
    allowed,
    limit: OUT[LIMIT],
    remaining: OUT[REMAINING],
    retryAfter: allowed ? null : OUT[RETRY_AFTER],
    resetAfter: OUT[RESET_AFTER],
    wait: OUT[WAIT],
  };
}

module.exports = { OUT, decision };
