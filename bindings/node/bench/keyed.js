'use strict';
// KeyedLimiter.check decisions per second over 1,000 and 1,000,000 random keys, against
// rate-limiter-flexible's RateLimiterMemory.consume and express-rate-limit's MemoryStore
// .increment, and against the floor of any native keyed check, in one process: alternated
// rounds, medians. Each is called the way a request handler calls it: sluicegate
// synchronously, the other two awaited (their APIs return Promises). The quotas are generous,
// so that every library takes its admitting path. sluicegate runs twice: GCRA (its default;
// a key's state is fresh again a microsecond after its check, so the engine drops idle keys
// and inserts them again) and the fixed window the other two count (a key's state lives until
// its window ends, as theirs do).
//
// The floor: `benchFloor(key)`, a native function exported for this bench alone that reads
// the key's UTF-16 code units as a check does and decides nothing, then a `Map.get` of the key
// in a Map holding every key of the round's space: what a native call taking the string plus
// a JavaScript hash lookup cost, the least a native keyed check can cost.
//
// Keys (a 1,000,000-key round checks each key about once: mostly new keys, inserted):
// `b36`: `user:<base36>`, 13-14 characters; `0`: `user:<n>`; a number: random letters and
// digits of that many characters.
//
//   node bench/keyed.js [rounds] [shapes, e.g. b36 or b36,8,40]
//
// Prints Markdown, and `headline:` lines that scripts/bench_report.py reads.

const { RateLimiterMemory } = require('rate-limiter-flexible');
const { MemoryStore } = require('express-rate-limit');
const { KeyedLimiter } = require('..');
const { benchFloor } = require('../lib/native');
const { alternateAsync, median, machine, randomKeys } = require('./support');

const ROUNDS = Number(process.argv[2] || 7);
const SHAPES = (process.argv[3] || 'b36').split(',').map((s) => (s === 'b36' ? -1 : Number(s)));

const OURS = 'sluicegate KeyedLimiter.check';
const FLEXIBLE = 'rate-limiter-flexible consume';
const FLOOR = 'floor: native call + Map.get';

async function run(space, checks, length) {
  const keys = randomKeys(space, checks, 42, length);
  const sluicegate = new KeyedLimiter({ quota: '1000000/second', algorithm: 'gcra' });
  // The two others count fixed windows: the same algorithm, for a like-for-like row.
  const windowed = new KeyedLimiter({ quota: '1000000/second', algorithm: 'fixed-window' });
  const flexible = new RateLimiterMemory({ points: 1_000_000, duration: 1 });
  const store = new MemoryStore();
  store.init({ windowMs: 1000 });
  const map = new Map();
  for (const key of new Set(keys)) map.set(key, 1);
  let sink = 0;
  const cases = [
    [OURS, async () => {
      for (let i = 0; i < checks; i++) sink += sluicegate.check(keys[i]).remaining;
      return checks;
    }],
    ['sluicegate fixed-window', async () => {
      for (let i = 0; i < checks; i++) sink += windowed.check(keys[i]).remaining;
      return checks;
    }],
    [FLEXIBLE, async () => {
      for (let i = 0; i < checks; i++) sink += (await flexible.consume(keys[i])).remainingPoints;
      return checks;
    }],
    ['express-rate-limit increment', async () => {
      for (let i = 0; i < checks; i++) sink += (await store.increment(keys[i])).totalHits;
      return checks;
    }],
    [FLOOR, async () => {
      for (let i = 0; i < checks; i++) if (benchFloor(keys[i])) sink += map.get(keys[i]);
      return checks;
    }],
  ];
  const results = await alternateAsync(cases, ROUNDS);
  store.shutdown();
  const base = median(results[FLEXIBLE]);
  const floor = median(results[FLOOR]);
  const ours = median(results[OURS]);
  const spelled = length < 0 ? '`user:<base36>` keys (13-14 characters)'
    : length ? `random keys of ${length} characters` : '`user:<n>` keys';
  console.log(`\n${space.toLocaleString('en')} ${spelled}, ${checks.toLocaleString('en')} checks a round, ${ROUNDS} rounds, medians:\n`);
  console.log('| contender | decisions/s | ns a decision | against rate-limiter-flexible |');
  console.log('|---|--:|--:|--:|');
  for (const [name, perSecond] of Object.entries(results)) {
    const m = median(perSecond);
    console.log(`| ${name} | ${(m / 1e6).toFixed(2)} M | ${(1e9 / m).toFixed(0)} | ${(m / base).toFixed(1)}x |`);
  }
  console.log(`\nsluicegate KeyedLimiter.check takes ${(floor / ours).toFixed(2)}x the floor's time.`);
  const id = `node-keyed-${space}-${length < 0 ? 'b36' : length}`;
  console.log(`headline: ${id}: ${(ours / base).toFixed(1)}x rate-limiter-flexible's decisions/s (${(1e9 / ours).toFixed(0)} ns against ${(1e9 / base).toFixed(0)}); ${(floor / ours).toFixed(2)}x the floor's time | native call + Map.get ${(1e9 / floor).toFixed(0)} ns`);
  return sink;
}

(async () => {
  console.log(`KeyedLimiter.check against rate-limiter-flexible and express-rate-limit; ${machine()}.`);
  for (const length of SHAPES) {
    await run(1_000, 1_000_000, length);
    await run(1_000_000, 1_000_000, length);
  }
  process.exit(0); // rate-limiter-flexible leaves a timer per key behind
})();
