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
// `n` keys drawn from `space` distinct ones. Without `length`, `user:<id>`; with it, keys of
// exactly `length` characters: random letters and digits, as API keys and tokens are.
function randomKeys(space, n, seed = 42, length = 0) {
  let x = seed >>> 0;
  const keys = new Array(n);
  const spelled = length > 0 ? spellings(space, length) : null;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0; // a fixed LCG: the same keys every run
    keys[i] = spelled ? spelled[x % space] : `user:${x % space}`;
  }
  return keys;
}

// `space` distinct random strings of `length` characters (the id in base 36 at the end, so
// they stay distinct; random characters before it).
function spellings(space, length) {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let x = 12345;
  const out = new Array(space);
  for (let id = 0; id < space; id++) {
    const tail = id.toString(36);
    let head = '';
    for (let j = tail.length; j < length; j++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      head += alphabet[(x >>> 16) % 36];
    }
    out[id] = head + tail;
  }
  return out;
}

module.exports = { alternate, alternateAsync, median, quantile, machine, randomKeys };
