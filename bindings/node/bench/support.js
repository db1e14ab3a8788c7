'use strict';
// Shared by the benchmarks: alternated rounds, medians, and the machine's name.

const os = require('node:os');

/** Runs every `[name, fn]` of `cases` `rounds` times, alternating, and returns each one's
 * results per second (fn returns how many operations it did) as `{ name: [..] }`. */
function alternate(cases, rounds) {
  const results = Object.fromEntries(cases.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? cases : [...cases].reverse();
    for (const [name, fn] of order) {
      const start = process.hrtime.bigint();
      const ops = fn();
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      results[name].push(ops / seconds);
    }
  }
  return results;
}

/** Async form of `alternate`. */
async function alternateAsync(cases, rounds) {
  const results = Object.fromEntries(cases.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? cases : [...cases].reverse();
    for (const [name, fn] of order) {
      const start = process.hrtime.bigint();
      const ops = await fn();
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      results[name].push(ops / seconds);
    }
  }
  return results;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The quantile `q` (0..1) of `values`, nearest rank. */
function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

function machine() {
  const cpus = os.cpus();
  return `${cpus.length} x ${cpus[0]?.model.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, ${os.platform()}-${os.arch()}`;
}

/** `n` random keys of `user:<number>`, made up front so that making them is not timed. */
function randomKeys(space, n, seed = 42) {
  let x = seed >>> 0;
  const keys = new Array(n);
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0; // a fixed LCG: the same keys every run
    keys[i] = `user:${x % space}`;
  }
  return keys;
}

module.exports = { alternate, alternateAsync, median, quantile, machine, randomKeys };
