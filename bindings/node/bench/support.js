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

/** `n` keys drawn at random from `space` distinct ones, made up front so that making them is
 * not timed. `length` 0: `user:<id>`; -1: `user:<base36>`, a random 8- or 9-digit base-36 id
 * (13 or 14 characters in all); above 0: exactly `length` random letters and digits, as API
 * keys and tokens are. */
function randomKeys(space, n, seed = 42, length = 0) {
  let x = seed >>> 0;
  const keys = new Array(n);
  const spelled = length > 0 ? spellings(space, length) : length < 0 ? base36Ids(space) : null;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0; // a fixed LCG: the same keys every run
    keys[i] = spelled ? spelled[x % space] : `user:${x % space}`;
  }
  return keys;
}

// `space` distinct `user:<base36>` keys: a random id between 2^37 and 2^46 (8 or 9 base-36
// digits), with the key's index in its low bits so that they stay distinct.
function base36Ids(space) {
  const out = new Array(space);
  let x = 987654321;
  for (let id = 0; id < space; id++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[id] = `user:${((x % 65536) * 2 ** 30 + 2 ** 37 + id).toString(36)}`;
  }
  return out;
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
