'use strict';
// RedisLimiter: one limit shared by every process on the same Redis (standalone or Cluster),
// decided atomically on Redis by the engine's scripts; every call returns a Promise.

const native = require('./native');
const { cost, badKey, limitOptions, describe, knownOptions } = require('./args');
const { nativeClock } = require('./clock');
const { redisTarget, redisFields, FIELDS } = require('./redis_target');

const CHECK = 0;
const PEEK = 1;
const HIT = 2;

/** Lets only `connect` construct. */
const TOKEN = Symbol('RedisLimiter.connect');

class RedisLimiter {
  #native;

  /**
   * Connects to Redis: `{ quota, algorithm = 'gcra', url = 'redis://127.0.0.1:6379/',
   * caCert, clientCert, clientKey, sentinelUsername, sentinelPassword, prefix = 'sluicegate:',
   * cluster = false, timeout = 100, connectTimeout = 1000, clock }`
   * (times in ms; `url` lists seed nodes separated by commas for a Cluster; `clock`, a
   * ManualClock, sends client time instead of reading Redis's, for tests). Rejects with an
   * Error saying why when Redis cannot be reached or an option is wrong.
   */
  static async connect(options) {
    const settings = redisOptions(options, 'RedisLimiter.connect(options)');
    knownOptions(options, ['quota', 'algorithm', ...FIELDS, 'prefix', 'cluster', 'timeout', 'connectTimeout', 'clock'], 'RedisLimiter.connect(options)');
    const clock = nativeClock(options.clock, 'RedisLimiter.connect(options)');
    let handle;
    try {
      handle = await native.connectRedis(settings, clock);
    } catch (error) {
      throw connectError(error);
    }
    return new RedisLimiter(TOKEN, handle, settings);
  }

  constructor(token, handle, settings) {
    if (token !== TOKEN) throw new TypeError('use `await RedisLimiter.connect(options)` to make a RedisLimiter');
    this.#native = handle;
    this.quota = settings.quota;
    this.algorithm = settings.algorithm;
    this.prefix = settings.prefix;
  }

  /** Decides a request of `n` (default 1) for `key` on Redis, consuming it when allowed. */
  check(key, n) {
    return this.#decide(key, CHECK, n);
  }

  /** The answer `check(key, n)` would give now, consuming nothing. */
  peek(key, n) {
    return this.#decide(key, PEEK, n);
  }

  /** Records `n` (default 1) for `key` whatever the answer. */
  hit(key, n) {
    return this.#decide(key, HIT, n);
  }

  /** Forgets `key` on Redis (one DEL): a Promise of whether it was held. */
  async reset(key) {
    if (typeof key !== 'string') throw badKey(key);
    return this.#native.reset(key);
  }

  async #decide(key, op, n) {
    if (typeof key !== 'string') throw badKey(key);
    return answer(await this.#native.decide(key, op, cost(n)));
  }

  /** The largest cost one check can be allowed. */
  get maxCost() {
    return this.#native.maxCost;
  }

  /** False while the limiter considers Redis down (calls then fail at once). */
  get available() {
    return this.#native.available;
  }

  /** Lets go of the connection; later calls reject. */
  async close() {
    this.#native.close();
  }
}

/** The native options for `options`, checked. */
function redisOptions(options, what, prefix = 'sluicegate:') {
  const { quota, algorithm } = limitOptions(options, what);
  // `redis` (the throttle's URL string or object) or `url` with the TLS and Sentinel
  // options beside it (RedisLimiter.connect's).
  const redis = options.redis !== undefined
    ? redisTarget(options.redis, 'redis', what)
    : redisFields({ ...options, url: options.url ?? 'redis://127.0.0.1:6379/' }, (field) => field, what);
  const p = options.prefix ?? prefix;
  if (typeof p !== 'string') throw new TypeError(`${what}: \`prefix\` must be a string, got ${describe(p)}`);
  const cluster = options.cluster ?? false;
  if (typeof cluster !== 'boolean') throw new TypeError(`${what}: \`cluster\` must be a boolean, got ${describe(cluster)}`);
  return {
    quota,
    algorithm,
    redis,
    prefix: p,
    cluster,
    timeout: milliseconds(options.timeout, 100, `${what}: \`timeout\``),
    connectTimeout: milliseconds(options.connectTimeout, 1000, `${what}: \`connectTimeout\``),
  };
}

function milliseconds(value, fallback, what) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`${what} must be a number of milliseconds, got ${describe(value)}`);
  if (!(value > 0) || value === Infinity) throw new RangeError(`${what} must be a positive number of milliseconds, got ${value}`);
  return value;
}

/** A native answer as a decision, or thrown as the error it carries. */
function answer(a) {
  if (a.error != null) throw callError(a.error, a.message);
  return {
    allowed: a.allowed,
    limit: a.limit,
    remaining: a.remaining,
    retryAfter: a.allowed ? null : a.retryAfter,
    resetAfter: a.resetAfter,
    wait: a.wait,
  };
}

/** `capacity` is a RangeError; every other kind an Error with `code` ERR_SLUICEGATE_REDIS_<KIND>. */
function callError(kind, message) {
  if (kind === 'capacity') {
    const error = new RangeError(message);
    error.code = 'ERR_SLUICEGATE_CAPACITY';
    return error;
  }
  const error = new Error(message);
  error.code = `ERR_SLUICEGATE_REDIS_${kind.toUpperCase()}`;
  return error;
}

/** Why `connect` failed: an option the engine refuses (napi's `InvalidArg`: a quota the
 * parser refuses, an unknown algorithm) is a RangeError with `code`
 * ERR_SLUICEGATE_INVALID_OPTION, as every constructor's; anything else an Error with `code`
 * ERR_SLUICEGATE_REDIS_CONNECT. */
function connectError(error) {
  if (error?.code === 'InvalidArg') {
    const invalid = new RangeError(error.message, { cause: error });
    invalid.code = 'ERR_SLUICEGATE_INVALID_OPTION';
    return invalid;
  }
  const wrapped = new Error(error.message, { cause: error });
  wrapped.code = 'ERR_SLUICEGATE_REDIS_CONNECT';
  return wrapped;
}

module.exports = { RedisLimiter, redisOptions, answer, callError, connectError };
