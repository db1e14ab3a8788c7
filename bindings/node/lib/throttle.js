'use strict';
// throttle(axiosInstance, options): outgoing requests wait for their slot instead of
// exceeding a quota. A request interceptor holds each request until the engine admits it:
// requests with the same keys wait in one first-come-first-served queue, whose head is
// decided again exactly when the engine's `retryAfter` says it would be admitted (one timer
// per waiting queue, none when idle). Several limits are decided all-or-nothing by the
// engine's protocol in one native call (NativeGroup). A request aborted while it waits
// consumes nothing and leaves the queue; axios then rejects it with its own CanceledError.

const { limitOptions, wholeNumber, describe } = require('./args');
const { localGate, redisGate } = require('./gate');

/** Per-request state that must survive axios's config merge on a retry. */
const STATE = 'sluicegate';

/**
 * Makes `instance` (an axios instance) wait for its quota before each request and returns it.
 * Options: `quota` and `algorithm` for one limit, or `limits: [{ quota, algorithm, key }]`
 * (`key(config)` returns the request's key on that limit: per host, per user...), `redis` (a
 * URL: the limits live on Redis, shared by every process), `prefix` (Redis key prefix),
 * `respectRetryAfter` (default true) and `maxRetries` (default 3).
 */
function throttle(instance, options) {
  if (!instance || typeof instance.interceptors?.request?.use !== 'function') {
    throw new TypeError(`throttle(instance, options): \`instance\` must be an axios instance, got ${describe(instance)}`);
  }
  const limits = normalize(options);
  const respectRetryAfter = options.respectRetryAfter ?? true;
  if (typeof respectRetryAfter !== 'boolean') {
    throw new TypeError(`throttle: \`respectRetryAfter\` must be a boolean, got ${describe(respectRetryAfter)}`);
  }
  const maxRetries = wholeNumber(options.maxRetries, 'maxRetries', 0, 1000, 3);
  if (options.redis !== undefined && typeof options.redis !== 'string') {
    throw new TypeError(`throttle: \`redis\` must be a URL string such as 'redis://127.0.0.1:6379/', got ${describe(options.redis)}`);
  }
  const gate = options.redis === undefined ? localGate(limits) : redisGate(limits, options);
  const queues = new Queues(limits, gate);

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
  instance.sluicegate = { queued: () => queues.size };
  return instance;
}

/** The limits of `options`: `[{ quota, algorithm, key }]`. */
function normalize(options) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`throttle(instance, options): \`options\` must be an object such as { quota: '10/second' }, got ${describe(options)}`);
  }
  if (options.limits !== undefined && options.quota !== undefined) {
    throw new TypeError('throttle: give either `quota` (one limit) or `limits` (several), not both');
  }
  const list = options.limits ?? [options];
  if (!Array.isArray(list) || list.length === 0) {
    throw new TypeError(`throttle: \`limits\` must be a non-empty array of { quota, algorithm, key }, got ${describe(list)}`);
  }
  return list.map((limit, i) => {
    const what = options.limits ? `throttle: limits[${i}]` : 'throttle';
    const { quota, algorithm } = limitOptions(limit, what);
    const key = limit.key;
    if (key !== undefined && typeof key !== 'function') {
      throw new TypeError(`${what}: \`key\` must be a function of the request config, got ${describe(key)}`);
    }
    return { quota, algorithm, key, name: limit.name ?? String(i) };
  });
}

/** The request's key on each limit. */
function keysOf(limits, config) {
  return limits.map((limit, i) => {
    if (!limit.key) return '';
    const key = limit.key(config);
    if (typeof key === 'string') return key;
    if (typeof key === 'number') return String(key);
    throw new TypeError(`throttle: limits[${i}].key(config) must return a string, got ${describe(key)}`);
  });
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

/** Whether the request was cancelled (AbortSignal, or axios's older CancelToken). */
function cancelled(config) {
  return Boolean(config.signal?.aborted || config.cancelToken?.reason);
}

/** Calls `onCancel` once if the request is cancelled; returns what stops listening. */
function onCancel(config, onCancelled) {
  const { signal, cancelToken } = config;
  let live = true;
  const fire = () => {
    if (live) {
      live = false;
      onCancelled();
    }
  };
  signal?.addEventListener?.('abort', fire, { once: true });
  cancelToken?.promise?.then(fire, () => {});
  return () => {
    live = false;
    signal?.removeEventListener?.('abort', fire);
  };
}

const now = () => performance.now();

/** Lets `entry`'s request go at `at` (performance.now() time), never before: a Node timer may
 * fire early on its loop's cached clock, and then waits out the rest. */
function release(entry, at) {
  const left = at - now();
  if (left > 0) setTimeout(release, left, entry, at);
  else entry.resolve(entry.config);
}

/** The waiting queues, one per distinct set of keys, each existing only while it has work. */
class Queues {
  constructor(limits, gate) {
    this.limits = limits;
    this.gate = gate;
    this.map = new Map();
  }

  /** Requests waiting, all queues together. */
  get size() {
    let n = 0;
    for (const q of this.map.values()) n += q.waiting.length;
    return n;
  }

  queue(config) {
    const keys = keysOf(this.limits, config);
    const id = keys.length === 1 ? keys[0] : JSON.stringify(keys);
    let q = this.map.get(id);
    if (!q) {
      q = { id, keys, waiting: [], timer: null, running: false, pausedUntil: 0 };
      this.map.set(id, q);
    }
    return q;
  }

  /** The request interceptor: resolves with `config` once the engine admits it. */
  admit(config) {
    // A cancelled request goes straight on, consuming nothing: axios's dispatch then
    // rejects it with its own CanceledError (so axios.isCancel() holds).
    if (cancelled(config)) return config;
    const q = this.queue(config);
    return new Promise((resolve, reject) => {
      const entry = { config, resolve, reject, stop: null };
      entry.stop = onCancel(config, () => {
        const at = q.waiting.indexOf(entry);
        if (at >= 0) q.waiting.splice(at, 1);
        resolve(config);
        this.settle(q);
      });
      // A request sent again after a 429 had its turn already: it goes first.
      if (config[STATE]?.retries) q.waiting.unshift(entry);
      else q.waiting.push(entry);
      if (!q.running && !q.timer) this.run(q);
    });
  }

  /** A `429` asked to wait `ms` before anything more goes to this request's keys. */
  pause(config, ms) {
    const q = this.queue(config);
    q.pausedUntil = Math.max(q.pausedUntil, now() + ms);
  }

  /** Admits the queue's head for as long as the engine allows, then waits exactly as told. */
  async run(q) {
    q.running = true;
    try {
      while (q.waiting.length > 0) {
        const paused = q.pausedUntil - now();
        if (paused > 0) return this.wake(q, paused);
        let d;
        try {
          d = await this.gate(q.keys);
        } catch (error) {
          const head = q.waiting.shift();
          if (head) {
            head.stop();
            head.reject(error);
          }
          continue;
        }
        if (!d.allowed) return this.wake(q, d.retryAfter);
        // The admission is for these keys; whoever is first now takes it.
        const head = q.waiting.shift();
        if (!head) break;
        head.stop();
        // A leaky bucket admits with a shaping delay: the request goes when it ends.
        if (d.wait > 0) release(head, now() + d.wait);
        else head.resolve(head.config);
      }
    } finally {
      q.running = false;
      this.settle(q);
    }
  }

  /** Decides the queue again in `ms`, as the engine said. Node's timers fire on whole
   * milliseconds of its loop's clock: a timer that fires early finds the head still denied
   * and waits again for the few microseconds the engine then gives. */
  wake(q, ms) {
    q.timer = setTimeout(() => {
      q.timer = null;
      this.run(q);
    }, Math.max(1, ms));
  }

  /** Forgets a queue that has nothing left to do, with its timer. */
  settle(q) {
    if (q.waiting.length > 0 || q.running) return;
    if (q.timer && q.pausedUntil <= now()) {
      clearTimeout(q.timer);
      q.timer = null;
    }
    if (!q.timer) {
      if (q.pausedUntil > now()) this.wake(q, q.pausedUntil - now()); // forget it when the pause ends
      else this.map.delete(q.id);
    }
  }
}

module.exports = { throttle };
