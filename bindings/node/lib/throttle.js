'use strict';
// throttle(axiosInstance, options): outgoing requests wait for their slot instead of
// exceeding a quota. A request interceptor holds each request until the engine admits it
// (lib/throttle_queue.js); several limits are decided all-or-nothing by the engine's protocol
// in one native call (NativeGroup). axios-rate-limit's options are taken as they are
// (lib/throttle_options.js), and the instance gets its run-time methods: `getMaxRPS()`,
// `setMaxRPS(n)`, `setRateLimitOptions(options)` (the engine's quota change at run time) and
// `getQueue()`.

const { wholeNumber, describe } = require('./args');
const { localGate, redisGate } = require('./gate');
const { checkNames, limitsOf, bounds } = require('./throttle_options');
const { Queues, STATE } = require('./throttle_queue');

/**
 * Makes `instance` (an axios instance) wait for its quota before each request and returns it.
 * Options: `quota` and `algorithm` for one limit, or axios-rate-limit's `maxRequests` with
 * `perMilliseconds` (or `duration`), or `maxRPS` (an exact sliding log: never more than N in
 * any P ms), or `limits: [...]` of either form (`key(config)` returns the request's key on
 * that limit: per host, per user...), `redis` (a URL: the limits live on Redis, shared by
 * every process), `prefix` (Redis key prefix), `respectRetryAfter` (default true),
 * `maxRetries` (default 3), `maxQueue` and `maxWait` (the queue's bounds).
 */
function throttle(instance, options) {
  if (!instance || typeof instance.interceptors?.request?.use !== 'function') {
    throw new TypeError(`throttle(instance, options): \`instance\` must be an axios instance, got ${describe(instance)}`);
  }
  checkNames(options);
  let limits = limitsOf(options);
  const respectRetryAfter = options.respectRetryAfter ?? true;
  if (typeof respectRetryAfter !== 'boolean') {
    throw new TypeError(`throttle: \`respectRetryAfter\` must be a boolean, got ${describe(respectRetryAfter)}`);
  }
  const maxRetries = wholeNumber(options.maxRetries, 'maxRetries', 0, 1000, 3);
  if (options.redis !== undefined && typeof options.redis !== 'string') {
    throw new TypeError(`throttle: \`redis\` must be a URL string such as 'redis://127.0.0.1:6379/', got ${describe(options.redis)}`);
  }
  const gate = options.redis === undefined ? localGate(limits) : redisGate(limits, options);
  const queues = new Queues(limits, gate, bounds(options));

  instance.interceptors.request.use((config) => queues.admit(config));
  if (respectRetryAfter) {
    instance.interceptors.response.use(undefined, (error) => {
      const pause = retryAfter(error);
      const config = error?.config;
      if (pause === null || !config) throw error;
      const state = config[STATE] ?? {};
      if ((state.retries ?? 0) >= maxRetries) throw error;
      config[STATE] = { retries: (state.retries ?? 0) + 1 };
      queues.pause(config, pause);
      return instance.request(config);
    });
  }

  /** The first limit's quota in requests per second, as axios-rate-limit's `getMaxRPS`. */
  instance.getMaxRPS = () => gate.rates()[0];
  /** The waiting requests' configs (a copy, so `getQueue().length` is how many wait). */
  instance.getQueue = () => queues.waiting();
  /**
   * New quotas, as the constructor's options (`{ maxRequests, perMilliseconds }`,
   * `{ maxRPS }`, `{ quota }`, `{ limits }`), by the engine's quota change: the requests sent
   * in the last window still count under the new quota. `null`/`undefined` change nothing.
   */
  instance.setRateLimitOptions = (next) => {
    if (next === null || next === undefined) return;
    checkNames(next);
    const changed = limitsOf(next);
    if (changed.length !== limits.length) {
      throw new TypeError(`throttle: setRateLimitOptions: ${changed.length} limits given, this throttle has ${limits.length}`);
    }
    changed.forEach((limit, i) => {
      // The algorithm stays unless one is named: only quotas change at run time.
      const named = next.limits?.length ? next.limits[i].algorithm : next.algorithm;
      if (named !== undefined && named !== limits[i].algorithm) {
        throw new TypeError(`throttle: setRateLimitOptions: limit ${i} runs '${limits[i].algorithm}', not '${limit.algorithm}': build a new throttle to change the algorithm`);
      }
    });
    gate.setQuotas(changed.map((limit) => limit.quota));
    limits = limits.map((limit, i) => ({ ...limit, quota: changed[i].quota }));
    queues.retune();
  };
  /** `n` requests per second: `setRateLimitOptions({ maxRequests: n, perMilliseconds: 1000 })`. */
  instance.setMaxRPS = (n) => instance.setRateLimitOptions({ maxRequests: n, perMilliseconds: 1000 });
  instance.sluicegate = { queued: () => queues.size };
  return instance;
}

/** The pause a `429` asks for through `Retry-After`, in ms; null for anything else. */
function retryAfter(error) {
  const response = error?.response;
  if (!response || response.status !== 429) return null;
  const headers = response.headers ?? {};
  const value = typeof headers.get === 'function' ? headers.get('retry-after') : headers['retry-after'];
  if (value === undefined || value === null) return null;
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

module.exports = { throttle };
