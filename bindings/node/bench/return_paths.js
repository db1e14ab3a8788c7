'use strict';
// Two ways for a check to hand its decision to JavaScript, measured against each other:
//   array:  the native call writes the numbers into a Float64Array and returns a boolean;
//           JavaScript builds the decision object (what the package does);
//   object: the native call builds the decision object through Node-API and returns it.
// Also the floor: the array path's native call alone, without building the object; and what
// the package's own calls cost: KeyedLimiter.check(key) and Limiter.check().
// Over 1,000 keys (all present after the first round): ns per check, medians of alternated rounds.

const { newKeyed, keyedDecide, keyedDecideObject } = require('../lib/native');
const { KeyedLimiter, Limiter } = require('..');
const { OUT, decision } = require('../lib/decision');
const { alternate, median, machine, randomKeys } = require('./support');

const N = 2_000_000;
const ROUNDS = 9;
const keys = randomKeys(1000, 1 << 16);
const mask = keys.length - 1;
const limiter = newKeyed('1000000/second', 'gcra', null, 0, OUT);
const keyed = new KeyedLimiter({ quota: '1000000/second' });
const one = new Limiter({ quota: '1000000000/second' });

let sink = 0;
const cases = [
  ['array (package)', () => {
    for (let i = 0; i < N; i++) sink += decision(keyedDecide(limiter, keys[i & mask], 0, 1)).remaining;
    return N;
  }],
  ['object from Rust', () => {
    for (let i = 0; i < N; i++) sink += keyedDecideObject(limiter, keys[i & mask], 0, 1).remaining;
    return N;
  }],
  ['native call only', () => {
    for (let i = 0; i < N; i++) sink += keyedDecide(limiter, keys[i & mask], 0, 1) ? 1 : 0;
    return N;
  }],
  ['KeyedLimiter.check', () => {
    for (let i = 0; i < N; i++) sink += keyed.check(keys[i & mask]).remaining;
    return N;
  }],
  ['Limiter.check', () => {
    for (let i = 0; i < N; i++) sink += one.check().remaining;
    return N;
  }],
];

const results = alternate(cases, ROUNDS);
console.log(`# return paths: KeyedLimiter, 1,000 keys, ${ROUNDS} alternated rounds of ${N} checks; ${machine()}`);
for (const [name, perSecond] of Object.entries(results)) {
  const m = median(perSecond);
  console.log(`${name.padEnd(20)} ${(1e9 / m).toFixed(1).padStart(7)} ns/check  ${(m / 1e6).toFixed(2)} M checks/s`);
}
if (sink === 0.5) console.log(sink);
