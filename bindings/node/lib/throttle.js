'use strict';
// throttle(axiosInstance, options): outgoing requests wait for their slot instead of
// exceeding a quota. A request interceptor holds each request until the engine admits it
// (lib/throttle_queue.js); several limits are decided all-or-nothing by the engine's protocol
// in one native call (NativeGroup). axios-rate-limit's options are taken as they are
// (lib/throttle_options.js), and the instance gets its run-time methods: `getMaxRPS()`,
// `setMaxRPS(n)`, `setRateLimitOptions(options)` (the engine's quota change at run time) and
// `getQueue()`. As in axios-rate-limit, `throttle.getLimiter(options)` makes a throttle on its
// own, which `limiter.enable(instance)` (or `throttle(instance, { rateLimiter: limiter })`)
// puts on several instances: they then share its limits and its queue.

const { wholeNumber, describe } = require('./args');
const { localGate, redisGate } = require('./gate');
const { checkNames, limitsOf, bounds } = require('./throttle_options');
const { Queues, STATE } = require('./throttle_queue');
const { checkQueue } = require('./throttle_line');
const { redisTarget } = require('./redis_target');

/** A throttle: limits, their gate and the waiting queues, for any number of axios instances. */
class Throttle {
  #limits;
  #gate;
  #queues;
  #options;

  /** `options` as `throttle` takes them; none: no limit (every request goes at once), until
   * `setRateLimitOptions` gives one, as axios-rate-limit does. */
  constructor(options) {
    const given = options !== undefined && options !== null;
    if (given) checkNames(options);
    this.#options = given ? options : {};
    const custom = this.#options.queue === undefined ? null : checkQueue(this.#options.queue);
    this.#limits = given ? limitsOf(options) : [];
    this.#checkCustom(this.#limits);
    if (custom !== null && this.#options.maxQueue !== undefined) {
      throw new TypeError('throttle: `maxQueue` bounds this package\'s queue: with your own `queue`, bound it there');
    }
    this.respectRetryAfter = this.#options.respectRetryAfter ?? true;
    if (typeof this.respectRetryAfter !== 'boolean') {
      throw new TypeError(`throttle: \`respectRetryAfter\` must be a boolean, got ${describe(this.respectRetryAfter)}`);
    }
    this.maxRetries = wholeNumber(this.#options.maxRetries, 'maxRetries', 0, 1000, 3);
    redisTarget(this.#options.redis, 'redis', 'throttle');
    this.#gate = this.#gateOf(this.#limits);
    this.#queues = new Queues(this.#limits, this.#gate, bounds(this.#options), custom);
  }

  #gateOf(limits) {
    if (limits.length === 0) return null;
    return this.#options.redis === undefined ? localGate(limits) : redisGate(limits, this.#options);
  }

  /** A user's queue is one line: it cannot be split by keys. */
  #checkCustom(limits) {
    if (this.#options.queue !== undefined && limits.some((limit) => limit.key)) {
      throw new TypeError('throttle: a custom `queue` is one line of requests: it cannot be combined with a limit\'s `key`');
    }
  }

  /** The first limit's quota in requests per second, as axios-rate-limit's `getMaxRPS` (0 with no limit). */
  getMaxRPS() {
    return this.#gate === null ? 0 : this.#gate.rates()[0];
  }

  /** The waiting requests: your `queue`, else their configs (a copy, so `getQueue().length` is how many wait). */
  getQueue() {
    return this.#queues.waiting();
  }

  /**
   * New quotas, as the constructor's options (`{ maxRequests, perMilliseconds }`,
   * `{ maxRPS }`, `{ quota }`, `{ limits }`). As many limits as before: the engine's quota
   * change, the requests sent in the last window still counting under the new quota; another
   * number of limits: new limits, starting afresh. `null`/`undefined` change nothing.
   */
  setRateLimitOptions(next) {
    if (next === null || next === undefined) return;
    checkNames(next);
    const changed = limitsOf(next);
    this.#checkCustom(changed);
    if (changed.length !== this.#limits.length || this.#gate === null) {
      const gate = this.#gateOf(changed);
      this.#limits = changed;
      this.#gate = gate;
      this.#queues.rebuild(changed, gate);
      return;
    }
    changed.forEach((limit, i) => {
      // The algorithm stays unless one is named: only quotas change at run time.
      const named = next.limits?.length ? next.limits[i].algorithm : next.algorithm;
      if (named !== undefined && named !== this.#limits[i].algorithm) {
        throw new TypeError(`throttle: setRateLimitOptions: limit ${i} runs '${this.#limits[i].algorithm}', not '${limit.algorithm}': build a new throttle to change the algorithm`);
      }
    });
    this.#gate.setQuotas(changed.map((limit) => limit.quota));
    this.#limits = this.#limits.map((limit, i) => ({ ...limit, quota: changed[i].quota }));
    this.#queues.limits = this.#limits;
    this.#queues.retune();
  }

  /** `n` requests per second: `setRateLimitOptions({ maxRequests: n, perMilliseconds: 1000 })`. */
  setMaxRPS(n) {
    this.setRateLimitOptions({ maxRequests: n, perMilliseconds: 1000 });
  }

  /** Requests waiting. */
  get queued() {
    return this.#queues.size;
  }

  /** Puts this throttle on `instance` (an axios instance) and returns it, with the run-time methods. */
  enable(instance) {
    if (!instance || typeof instance.interceptors?.request?.use !== 'function') {
      throw new TypeError(`throttle(instance, options): \`instance\` must be an axios instance, got ${describe(instance)}`);
    }
    const queues = this.#queues;
    instance.interceptors.request.use((config) => queues.admit(config));
    if (this.respectRetryAfter) {
      instance.interceptors.response.use(undefined, (error) => {
        const pause = retryAfter(error);
        const config = error?.config;
        if (pause === null || !config) throw error;
        const state = config[STATE] ?? {};
        if ((state.retries ?? 0) >= this.maxRetries) throw error;
        config[STATE] = { retries: (state.retries ?? 0) + 1 };
        queues.pause(config, pause);
        return instance.request(config);
      });
    }
    instance.getMaxRPS = () => this.getMaxRPS();
    instance.getQueue = () => this.getQueue();
    instance.setRateLimitOptions = (next) => this.setRateLimitOptions(next);
    instance.setMaxRPS = (n) => this.setMaxRPS(n);
    instance.sluicegate = { queued: () => this.queued, limiter: this };
    return instance;
  }
}

/**
 * Makes `instance` (an axios instance) wait for its quota before each request and returns it.
 * Options: `quota` and `algorithm` for one limit, or axios-rate-limit's `maxRequests` with
 * `perMilliseconds` (or `duration`), or `maxRPS` (an exact sliding log: never more than N in
 * any P ms), or `limits: [...]` of either form (`key(config)` returns the request's key on
 * that limit: per host, per user...), `redis` (a URL, or `{ url, caCert, clientCert, clientKey,
 * sentinelUsername, sentinelPassword }`: the limits live on Redis, shared by
 * every process), `prefix` (Redis key prefix), `respectRetryAfter` (default true),
 * `maxRetries` (default 3), `maxQueue` and `maxWait` (the queue's bounds), `queue` (your
 * own, as axios-rate-limit takes it), or `rateLimiter` (a `throttle.getLimiter(...)` to share).
 * No options: no limit, as axios-rate-limit (`getMaxRPS()` is 0).
 */
function throttle(instance, options) {
  const shared = options?.rateLimiter;
  if (shared !== undefined) {
    if (!(shared instanceof Throttle)) {
      throw new TypeError(`throttle: \`rateLimiter\` must be a limiter from throttle.getLimiter(options), got ${describe(shared)}`);
    }
    const others = Object.keys(options).filter((name) => name !== 'rateLimiter');
    if (others.length > 0) throw new TypeError(`throttle: with \`rateLimiter\`, the limiter's own options apply: leave out ${others.map((n) => `\`${n}\``).join(', ')}`);
    return shared.enable(instance);
  }
  return new Throttle(options).enable(instance);
}

/** axios-rate-limit's `getLimiter(options)`: a throttle to put on several axios instances. */
throttle.getLimiter = (options) => new Throttle(options);

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

module.exports = { throttle, Throttle };
