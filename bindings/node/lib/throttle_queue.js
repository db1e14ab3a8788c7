'use strict';
// throttle's waiting queues: requests with the same keys wait in one first-come-first-served
// queue, whose head is decided again exactly when the engine's `retryAfter` says it would be
// admitted (one timer per waiting queue, none when idle). Bounded by `maxQueue` (requests
// waiting at once) and `maxWait` (ms one request may wait): past either, a request rejects
// with an Error (`code` `ERR_SLUICEGATE_QUEUE_FULL`, `ERR_SLUICEGATE_QUEUE_TIMEOUT`) and
// consumes nothing.

const { describe, withCode } = require('./args');

/** Per-request state that must survive axios's config merge on a retry. */
const STATE = 'sluicegate';

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
  constructor(limits, gate, { maxQueue, maxWait }) {
    this.limits = limits;
    this.gate = gate;
    this.map = new Map();
    this.maxQueue = maxQueue;
    this.maxWait = maxWait;
  }

  /** The waiting requests' configs, every queue's in order (a copy). */
  waiting() {
    const configs = [];
    for (const q of this.map.values()) for (const entry of q.waiting) configs.push(entry.config);
    return configs;
  }

  /** Decides every waiting queue again now: the quotas changed. */
  retune() {
    for (const q of this.map.values()) {
      if (q.timer && q.pausedUntil <= now()) {
        clearTimeout(q.timer);
        q.timer = null;
        if (!q.running) this.run(q);
      }
    }
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
    if (this.maxQueue !== Infinity && this.size >= this.maxQueue && !config[STATE]?.retries) {
      return Promise.reject(withCode(
        new Error(`throttle: the queue is full (maxQueue: ${this.maxQueue} requests waiting)`),
        'ERR_SLUICEGATE_QUEUE_FULL',
      ));
    }
    const q = this.queue(config);
    return new Promise((resolve, reject) => {
      const entry = { config, resolve, reject, stop: null, deadline: now() + this.maxWait };
      const leave = () => {
        const at = q.waiting.indexOf(entry);
        if (at >= 0) q.waiting.splice(at, 1);
      };
      const stopCancel = onCancel(config, () => {
        leave();
        entry.stop();
        resolve(config);
        this.settle(q);
      });
      const timer = this.maxWait === Infinity ? null : setTimeout(() => {
        leave();
        entry.stop();
        reject(timedOut(this.maxWait));
        this.settle(q);
      }, this.maxWait);
      entry.stop = () => {
        stopCancel();
        if (timer) clearTimeout(timer);
      };
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
          d = await this.gate.decide(q.keys);
        } catch (error) {
          const head = q.waiting.shift();
          if (head) {
            head.stop();
            head.reject(error);
          }
          continue;
        }
        if (!d.allowed) {
          // A head the engine cannot admit within its `maxWait` leaves now, not at its deadline.
          const head = q.waiting[0];
          if (head && now() + d.retryAfter > head.deadline) {
            q.waiting.shift();
            head.stop();
            head.reject(timedOut(this.maxWait));
            continue;
          }
          return this.wake(q, d.retryAfter);
        }
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

function timedOut(maxWait) {
  return withCode(
    new Error(`throttle: the request could not be sent within maxWait (${maxWait} ms)`),
    'ERR_SLUICEGATE_QUEUE_TIMEOUT',
  );
}

module.exports = { Queues, STATE, cancelled };
