'use strict';
// Argument checks shared by every class: what is wrong, said before the native call.

const MAX_COST = 0xffffffff;

/** The cost `n` as the native side takes it (1 when omitted), or a TypeError / RangeError. */
function cost(n) {
  if (n === undefined) return 1;
  if (typeof n === 'number' && n >>> 0 === n) return n; // a whole number in 0..2^32-1: the fast path
  if (typeof n !== 'number') {
    throw new TypeError(`a cost must be a number, got ${describe(n)}`);
  }
  if (!Number.isInteger(n)) {
    throw new RangeError(`a cost must be a whole number, got ${n}`);
  }
  throw new RangeError(`a cost must be between 0 and ${MAX_COST}, got ${n}`);
}

/** Throws a TypeError unless `key` is a string. */
function badKey(key) {
  return new TypeError(`a key must be a string, got ${describe(key)}`);
}

/** `options` checked to be an object with a quota string and an optional algorithm string. */
function limitOptions(options, what) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${what} takes an options object such as { quota: '100/minute' }, got ${describe(options)}`);
  }
  const { quota, algorithm = 'gcra' } = options;
  if (typeof quota !== 'string') {
    throw new TypeError(`${what}: \`quota\` must be a string such as '100/minute burst 20', got ${describe(quota)}`);
  }
  if (typeof algorithm !== 'string') {
    throw new TypeError(
      `${what}: \`algorithm\` must be one of 'gcra', 'token-bucket', 'leaky-bucket', 'fixed-window', ` +
        `'sliding-window', 'sliding-log', got ${describe(algorithm)}`,
    );
  }
  // The library reads the name (any case, `_` for `-`) and says it its way: `.algorithm`
  // reports 'sliding-window' for 'Sliding_Window', and an unknown name is its error.
  return { quota, algorithm: built(() => require('./native').algorithmName(algorithm)) };
}

/** A whole number within `min`..`max`, or `fallback` when undefined. */
function wholeNumber(value, name, min, max, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`\`${name}\` must be a number, got ${describe(value)}`);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`\`${name}\` must be a whole number between ${min} and ${max}, got ${value}`);
  }
  return value;
}

/**
 * Throws a TypeError (`code` `ERR_SLUICEGATE_UNKNOWN_OPTION`) for an option of `options` not in
 * `known`, naming the one meant when only its case differs (`maxkeys` for `maxKeys`): a typo
 * must not silently leave a bound off.
 */
function knownOptions(options, known, what) {
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue;
    const meant = known.find((k) => k.toLowerCase() === name.toLowerCase());
    const hint = meant ? `; did you mean \`${meant}\`?` : `; the options are ${known.map((k) => `\`${k}\``).join(', ')}`;
    throw withCode(new TypeError(`${what}: unknown option \`${name}\`${hint}`), 'ERR_SLUICEGATE_UNKNOWN_OPTION');
  }
}

/** `error` with `code` set, as Node's own errors carry one. */
function withCode(error, code) {
  error.code = code;
  return error;
}

/**
 * The result of `build()` (a native constructor), its option errors (napi's plain `Error` with
 * `code` `InvalidArg`: a quota the parser refuses, an unknown algorithm, a quota the
 * algorithm cannot run) thrown as a `RangeError` with `code` `ERR_SLUICEGATE_INVALID_OPTION`
 * and the engine's sentence.
 */
function built(build) {
  try {
    return build();
  } catch (error) {
    if (error?.code === 'InvalidArg') throw withCode(new RangeError(error.message), 'ERR_SLUICEGATE_INVALID_OPTION');
    throw error;
  }
}

/** How a value is named in an error message. */
function describe(value) {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === 'object') return objectName(value);
  if (typeof value === 'bigint') return `${value}n (a bigint)`;
  return typeof value === 'function' ? 'a function' : `${String(value)} (${typeof value})`;
}

/** An object as a sentence names it: "an object" (a plain one), "an array", "a Map", "an Error". */
function objectName(value) {
  if (Array.isArray(value)) return 'an array';
  const name = value.constructor?.name;
  if (!name || name === 'Object') return 'an object';
  return /^[AEIOU]/i.test(name) ? `an ${name}` : `a ${name}`;
}

module.exports = { cost, badKey, limitOptions, wholeNumber, describe, knownOptions, withCode, built };
