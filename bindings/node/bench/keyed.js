'use strict';
// KeyedLimiter.check decisions per second over 1,000 and 1,000,000 random keys, against
// rate-limiter-flexible's RateLimiterMemory.consume and express-rate-limit's MemoryStore
// .increment, in one process: alternated rounds, medians. Each is called the way a request
// handler calls it: sluicegate synchronously, the other two awaited (their APIs return
// Promises). The quotas are generous, so that every library takes its admitting path.
// sluicegate runs twice: GCRA (its default; a key's state is fresh again a microsecond after
// its check, so the engine drops idle keys and inserts them again) and the fixed window the
// other two count (a key's state lives until its window ends, as theirs do).
//
// Keys: random letters and digits of 8, 15, 36 and 40 characters (a 1,000,000-key round
// checks each key about once: mostly new keys, inserted).
//
//   node bench/keyed.js [rounds] [lengths, e.g. 8,15,36,40 or 0 for user:<n>]

const { RateLimiterMemory } = require('rate-limiter-flexible');
const { MemoryStore } = require('express-rate-limit');
const { KeyedLimiter } = require('..');
const { alternateAsync, median, machine, randomKeys } = require('./support');

const ROUNDS = Number(process.argv[2] || 7);
// Key lengths in characters (0: `user:<n>`), e.g. `node bench/keyed.js 7 8,40`.
const LENGTHS = (process.argv[3] || '8,15,36,40').split(',').map(Number);

async function run(space, checks, length) {
  const keys = randomKeys(space, checks, 42, length);
  const sluicegate = new KeyedLimiter({ quota: '1000000/second', algorithm: 'gcra' });
  // The two others count fixed windows: the same algorithm, for a like-for-like row.
  const windowed = new KeyedLimiter({ quota: '1000000/second', algorithm: 'fixed-window' });
  const flexible = new RateLimiterMemory({ points: 1_000_000, duration: 1 });
  const store = new MemoryStore();
  store.init({ windowMs: 1000 });
  let sink = 0;
  const cases = [
    ['sluicegate KeyedLimiter.check', async () => {
      for (let i = 0; i < checks; i++) sink += sluicegate.check(keys[i]).remaining;
      return checks;
    }],
    ['sluicegate fixed-window', async () => {
      for (let i = 0; i < checks; i++) sink += windowed.check(keys[i]).remaining;
      return checks;
    }],
    ['rate-limiter-flexible consume', async () => {
      for (let i = 0; i < checks; i++) sink += (await flexible.consume(keys[i])).remainingPoints;
      return checks;
    }],
    ['express-rate-limit increment', async () => {
      for (let i = 0; i < checks; i++) sink += (await store.increment(keys[i])).totalHits;
      return checks;
    }],
  ];
  const results = await alternateAsync(cases, ROUNDS);
  store.shutdown();
  const base = median(results['rate-limiter-flexible consume']);
  const spelled = length ? `random keys of ${length} characters` : '`user:<n>` keys';
  console.log(`\n${space.toLocaleString('en')} ${spelled}, ${checks.toLocaleString('en')} checks a round, ${ROUNDS} rounds:`);
  for (const [name, perSecond] of Object.entries(results)) {
    const m = median(perSecond);
    console.log(
      `  ${name.padEnd(30)} ${(m / 1e6).toFixed(2).padStart(6)} M/s  ${(1e9 / m).toFixed(0).padStart(5)} ns/decision  ${(m / base).toFixed(1).padStart(5)}x rate-limiter-flexible`,
    );
  }
  return sink;
}

(async () => {
  console.log(`# KeyedLimiter.check vs rate-limiter-flexible and express-rate-limit; ${machine()}`);
  for (const length of LENGTHS) {
    await run(1_000, 1_000_000, length);
    await run(1_000_000, 1_000_000, length);
  }
  process.exit(0); // rate-limiter-flexible leaves a timer per key behind
})();
