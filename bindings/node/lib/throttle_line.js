'use strict';
// Where a throttle's waiting requests stand in line: this package's array (one per set of
// keys), or, as axios-rate-limit takes it, the user's own `queue`: an object with `push` and
// `shift`, and `length` (synchronous) or `getLength()` (which may return a Promise, as may
// `push` and `shift`). A user's queue holds opaque entries and can only be pushed to and
// shifted from: a request cancelled or timed out while in it stays there, marked settled,
// and is skipped when shifted.

/** This package's line: an array, whose entries leave it as soon as they are settled. */
class ArrayLine {
  constructor() {
    this.entries = [];
  }

  push(entry) {
    this.entries.push(entry);
  }

  /** A request sent again after a 429 had its turn already: it goes first. */
  pushFirst(entry) {
    this.entries.unshift(entry);
  }

  shift() {
    return this.entries.shift();
  }

  /** The first entry, without taking it. */
  peek() {
    return this.entries[0];
  }

  /** Takes `entry` out (cancelled, timed out). */
  remove(entry) {
    const at = this.entries.indexOf(entry);
    if (at >= 0) this.entries.splice(at, 1);
  }

  size() {
    return this.entries.length;
  }

  /** The waiting requests' configs. */
  configs() {
    return this.entries.map((entry) => entry.config);
  }
}

/** A user's queue. */
class CustomLine {
  constructor(queue) {
    this.queue = queue;
  }

  push(entry) {
    return this.queue.push(entry);
  }

  /** No way to the front of a user's queue: a request sent again after a 429 waits at the back. */
  pushFirst(entry) {
    return this.queue.push(entry);
  }

  /** The first entry still waiting (settled ones are dropped on the way); a Promise when the queue's `shift` returns one. */
  async shift() {
    for (;;) {
      const entry = await this.queue.shift();
      if (entry == null || !entry.settled) return entry ?? undefined;
    }
  }

  peek() {
    return undefined;
  }

  /** Marks `entry` settled: skipped when shifted. */
  remove(entry) {
    entry.settled = true;
  }

  /** Entries in the queue (settled ones included); a Promise with `getLength()`. */
  size() {
    return typeof this.queue.getLength === 'function' ? this.queue.getLength() : this.queue.length;
  }

  configs() {
    return [];
  }
}

/** Checks `queue` (axios-rate-limit's `queue` option): push, shift, and length or getLength(). */
function checkQueue(queue) {
  const ok = queue !== null && typeof queue === 'object'
    && typeof queue.push === 'function' && typeof queue.shift === 'function'
    && (typeof queue.getLength === 'function' || typeof queue.length === 'number');
  if (!ok) {
    throw new TypeError('throttle: `queue` must have `push` and `shift` functions, and a `length` or a `getLength()` (an array will do)');
  }
  return queue;
}

module.exports = { ArrayLine, CustomLine, checkQueue };
