'use strict';
// throttle's waiting queues: requests with the same keys wait in one first-come-first-served
// queue, whose head is decided again exactly when the engine's `retryAfter` says it would be
// admitted (one timer per waiting queue, none when idle). Bounded by `maxQueue` (requests
// waiting at once) and `maxWait` (ms one request may wait): past either, a request rejects
// with an Error (`code` `ERR_SLUICEGATE_QUEUE_FULL`, `ERR_SLUICEGATE_QUEUE_TIMEOUT`) and
// consumes nothing.

const { describe, withCode } = require('./args');
const { ArrayLine, CustomLine } = require('./throttle_line');

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

/** What a cancelled request rejects with here: its AbortSignal's `reason` when that is an
 * Error (as axios-rate-limit rejects); otherwise null, and the request goes on for axios to
 * reject with its own CanceledError (so that `axios.isCancel()` holds and it is an Error). */
function abortReason(config) {
  const reason = config.signal?.aborted ? config.signal.reason : undefined;
  return reason instanceof Error ? reason : null;
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

/** The waiting queues, one per distinct set of keys, each existing only while it has work;
 * with a user's `queue`, one queue, standing in it. No limit (`throttle(instance)`): no wait. */
class Queues {
  constructor(limits, gate, { maxQueue, maxWait }, custom = null) {
    this.limits = limits;
    this.gate = gate;
    this.map = new Map();
    this.maxQueue = maxQueue;
    this.maxWait = maxWait;
    this.custom = custom;
  }

  /** The waiting requests: the user's queue itself, else every queue's configs in order (a copy). */
  waiting() {
    if (this.custom !== null) return this.custom;
    const configs = [];
    for (const q of this.map.values()) configs.push(...q.line.configs());
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

  /** New limits (another number of them) on a new gate: the waiting requests line up again
   * under their new keys, in the order they came. */
  rebuild(limits, gate) {
    const waiting = [];
    for (const q of this.map.values()) {
      if (q.timer) clearTimeout(q.timer);
      if (q.line instanceof ArrayLine) waiting.push(...q.line.entries);
    }
    const custom = this.custom !== null ? this.map.get('') : undefined;
    this.map.clear();
    this.limits = limits;
    this.gate = gate;
    if (custom) {
      Object.assign(custom, { keys: keysOf(limits, {}), timer: null, pausedUntil: 0 });
      this.map.set('', custom);
    }
    for (const entry of waiting) this.queue(entry.config).line.push(entry);
    for (const q of this.map.values()) if (!q.running) this.run(q);
  }

  /** Requests waiting, all queues together (those in a user's queue that has a `length`). */
  get size() {
    if (this.custom !== null) return typeof this.custom.length === 'number' ? this.custom.length : 0;
    let n = 0;
    for (const q of this.map.values()) n += q.line.size();
    return n;
  }

  queue(config) {
    const keys = keysOf(this.limits, config);
    const id = this.custom !== null ? '' : keys.length === 1 ? keys[0] : JSON.stringify(keys);
    let q = this.map.get(id);
    if (!q) {
      const line = this.custom !== null ? new CustomLine(this.custom) : new ArrayLine();
      q = { id, keys, line, timer: null, running: false, pausedUntil: 0 };
      this.map.set(id, q);
    }
    return q;
  }

  /** The request interceptor: resolves with `config` once the engine admits it. */
  admit(config) {
    if (this.gate === null) return config; // no limit
    // A cancelled request goes straight on, consuming nothing: axios's dispatch then
    // rejects it with its own CanceledError (so axios.isCancel() holds), or it rejects here
    // with its AbortSignal's reason, when that is an Error.
    if (cancelled(config)) {
      const reason = abortReason(config);
      return reason === null ? config : Promise.reject(reason);
    }
    if (this.maxQueue !== Infinity && this.size >= this.maxQueue && !config[STATE]?.retries) {
      return Promise.reject(withCode(
        new Error(`throttle: the queue is full (maxQueue: ${this.maxQueue} requests waiting)`),
        'ERR_SLUICEGATE_QUEUE_FULL',
      ));
    }
    const q = this.queue(config);
    return new Promise((resolve, reject) => {
      const entry = { config, resolve, reject, stop: null, settled: false, deadline: now() + this.maxWait };
      const leave = () => {
        q.line.remove(entry);
        entry.settled = true;
        entry.stop();
        this.settle(q);
      };
      const stopCancel = onCancel(config, () => {
        leave();
        const reason = abortReason(config);
        if (reason === null) resolve(config);
        else reject(reason);
      });
      const timer = this.maxWait === Infinity ? null : setTimeout(() => {
        leave();
        reject(timedOut(this.maxWait));
      }, this.maxWait);
      entry.stop = () => {
        stopCancel();
        if (timer) clearTimeout(timer);
      };
      // A request sent again after a 429 had its turn already: it goes first.
      const pushed = config[STATE]?.retries ? q.line.pushFirst(entry) : q.line.push(entry);
      const start = () => {
        if (q.timer) q.timer.ref?.(); // requests wait on it again
        else if (!q.running) this.run(q);
      };
      if (pushed && typeof pushed.then === 'function') pushed.then(start, reject);
      else start();
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
      while ((await q.line.size()) > 0) {
        const paused = q.pausedUntil - now();
        if (paused > 0) return this.wake(q, paused);
        let d;
        try {
          d = await this.gate.decide(q.keys);
        } catch (error) {
          const head = await q.line.shift();
          if (head) {
            head.settled = true;
            head.stop();
            head.reject(error);
          }
          continue;
        }
        if (!d.allowed) {
          // A head the engine cannot admit within its `maxWait` leaves now, not at its deadline.
          const head = q.line.peek();
          if (head && now() + d.retryAfter > head.deadline) {
            q.line.shift();
            head.settled = true;
            head.stop();
            head.reject(timedOut(this.maxWait));
            continue;
          }
          return this.wake(q, d.retryAfter);
        }
        // The admission is for these keys; whoever is first now takes it.
        const head = await q.line.shift();
        if (!head) break;
        head.settled = true;
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

  /** Forgets a queue that has nothing left to do, with its timer; a user's queue stays. */
  settle(q) {
    if (q.running || !(q.line instanceof ArrayLine) || q.line.size() > 0) return;
    if (q.timer && q.pausedUntil <= now()) {
      clearTimeout(q.timer);
      q.timer = null;
    }
    if (!q.timer) {
      if (q.pausedUntil > now()) {
        // Only to forget the queue when the pause ends: nothing waits on it, so it does
        // not keep the process alive (a request that comes meanwhile refs it again).
        this.wake(q, q.pausedUntil - now());
        q.timer.unref?.();
      } else {
        this.map.delete(q.id);
      }
    } else if (q.pausedUntil > now()) {
      q.timer.unref?.();
    }
  }
}

function timedOut(maxWait) {
  return withCode(
    new Error(`throttle: the request could not be sent within maxWait (${maxWait} ms)`),
    'ERR_SLUICEGATE_QUEUE_TIMEOUT',
  );
}

module.exports = { Queues, STATE, cancelled, keysOf };
