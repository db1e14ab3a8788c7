'use strict';
// throttle's options: its own (`quota`, `algorithm`, `key`, `limits`) and axios-rate-limit's
// as they are (`maxRequests` with `perMilliseconds` or `duration`, `maxRPS`, and `limits:
// [{ maxRequests, duration }]`). Each limit becomes a quota string the engine parses; the
// axios-rate-limit forms run the engine's exact sliding log, so never more than N requests
// go in any P milliseconds, as axios-rate-limit's users expect of it.

const { limitOptions, describe, knownOptions, wholeNumber, withCode } = require('./args');

/** Every option `throttle` takes. */
const KNOWN = [
  'quota', 'algorithm', 'key', 'limits', 'name',
  'maxRequests', 'perMilliseconds', 'duration', 'maxRPS',
  'redis', 'prefix', 'cluster', 'timeout', 'connectTimeout',
  'respectRetryAfter', 'maxRetries', 'maxQueue', 'maxWait', 'queue', 'rateLimiter',
];

/** Options of axios-rate-limit's with no counterpart here, and why. */
const REFUSED = {
  shouldCountRequest: 'a request is counted when it is sent, as the engine admits it',
};

/** What an invalid axios-rate-limit form says: its own sentences, which its users match. */
const INVALID = 'Invalid rate limit options';

function invalid(message) {
  return withCode(new RangeError(`throttle: ${INVALID}: ${message}`), 'ERR_SLUICEGATE_INVALID_OPTION');
}

/** Throws a TypeError for an option with no counterpart, or one this package does not know. */
function checkNames(options) {
  if (options === null || typeof options !== 'object') return;
  for (const name of Object.keys(REFUSED)) {
    if (options[name] !== undefined) {
      throw withCode(new TypeError(`throttle: \`${name}\` is not supported: ${REFUSED[name]}`), 'ERR_SLUICEGATE_UNSUPPORTED_OPTION');
    }
  }
  knownOptions(options, KNOWN, 'throttle');
}

/** A period in ms as the engine's quota text: whole milliseconds, else nanoseconds. */
function period(ms) {
  return Number.isInteger(ms) ? `${ms}ms` : `${Math.round(ms * 1e6)}ns`;
}

/** A positive finite number of requests. */
function requests(value, where) {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw invalid(`${where}maxRequests is required and must be a positive number`);
  }
  if (!Number.isInteger(value)) throw invalid(`${where}maxRequests must be a whole number, got ${value}`);
  return value;
}

/** axios-rate-limit's duration: ms as a number, or a string the engine parses ('1s', '500ms'). */
function duration(value, where) {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return period(value);
  if (typeof value === 'number' && (value === 0 || value === Infinity)) {
    throw invalid(`${where}duration must be a positive finite number, got ${value}`);
  }
  if (typeof value === 'string' && /^\s*\d+(\.\d+)?\s*(ms|s|m|h)\s*$/.test(value) && parseFloat(value) > 0) return value.trim();
  // axios-rate-limit's sentence, which its users match.
  throw invalid(`${where}Unrecognized duration: '${String(value)}'. Expected format: number+unit ms, s, m, h (e.g. '1s').`);
}

/**
 * One limit of `spec`: `{ quota, algorithm, key, name, perSecond }` where `spec` is this
 * package's `{ quota, algorithm, key }` or an axios-rate-limit form.
 */
function oneLimit(spec, where, name) {
  if (spec.quota !== undefined) {
    for (const axiosName of ['maxRequests', 'perMilliseconds', 'duration', 'maxRPS']) {
      if (spec[axiosName] !== undefined) throw new TypeError(`throttle: ${where}give either \`quota\` or \`${axiosName}\`, not both`);
    }
    const { quota, algorithm } = limitOptions(spec, where ? `throttle: ${where.slice(0, -2)}` : 'throttle');
    return { quota, algorithm, key: keyOf(spec, where), name };
  }
  let text;
  if (spec.maxRPS != null) {
    text = `${requests(spec.maxRPS, where)}/1s`;
  } else if (spec.duration != null) {
    text = `${requests(spec.maxRequests, where)}/${duration(spec.duration, where)}`;
  } else if (spec.perMilliseconds != null) {
    const p = spec.perMilliseconds;
    if (typeof p !== 'number' || !Number.isFinite(p) || p <= 0) {
      throw invalid(`${where}one of maxRPS, duration, or perMilliseconds is required and must be positive`);
    }
    text = `${requests(spec.maxRequests, where)}/${period(p)}`;
  } else if (spec.maxRequests !== undefined) {
    throw invalid(`${where}one of maxRPS, duration, or perMilliseconds is required and must be positive`);
  } else {
    throw invalid(`${where}give \`quota\` ('10/second'), or \`maxRequests\` with \`perMilliseconds\` or \`duration\`, or \`maxRPS\``);
  }
  const algorithm = spec.algorithm ?? 'sliding-log';
  if (typeof algorithm !== 'string') throw new TypeError(`throttle: ${where}\`algorithm\` must be a string, got ${describe(algorithm)}`);
  return { quota: text, algorithm, key: keyOf(spec, where), name };
}

function keyOf(spec, where) {
  const key = spec.key;
  if (key !== undefined && typeof key !== 'function') {
    throw new TypeError(`throttle: ${where}\`key\` must be a function of the request config, got ${describe(key)}`);
  }
  return key;
}

/** The limits `options` describes: `[{ quota, algorithm, key, name }]`. */
function limitsOf(options) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`throttle(instance, options): \`options\` must be an object such as { maxRequests: 5, perMilliseconds: 1000 } or { quota: '10/second' }, got ${describe(options)}`);
  }
  if (options.limits !== undefined && options.limits !== null && !(Array.isArray(options.limits) && options.limits.length === 0)) {
    if (options.quota !== undefined || options.maxRequests !== undefined || options.maxRPS !== undefined) {
      throw new TypeError('throttle: give either one limit (`quota`, `maxRequests`, `maxRPS`) or `limits`, not both');
    }
    if (!Array.isArray(options.limits)) {
      throw new TypeError(`throttle: \`limits\` must be an array of { quota, algorithm, key } or { maxRequests, duration }, got ${describe(options.limits)}`);
    }
    return options.limits.map((limit, i) => {
      if (limit === null || typeof limit !== 'object') throw new TypeError(`throttle: limits[${i}] must be an object, got ${describe(limit)}`);
      return oneLimit(limit, `limits[${i}]: `, limit.name ?? String(i));
    });
  }
  return [oneLimit(options, '', String(0))];
}

/** The queue's bounds: `maxQueue` requests waiting (default unbounded), `maxWait` ms each. */
function bounds(options) {
  const maxQueue = wholeNumber(options.maxQueue, 'maxQueue', 0, Number.MAX_SAFE_INTEGER, Infinity);
  const maxWait = options.maxWait ?? Infinity;
  if (typeof maxWait !== 'number' || !(maxWait >= 0)) {
    throw new RangeError(`throttle: \`maxWait\` must be a number of ms, 0 or more, got ${describe(maxWait)}`);
  }
  return { maxQueue, maxWait };
}

module.exports = { checkNames, limitsOf, bounds };
