'use strict';
// What a `rateLimit` middleware on Redis tells its app while Redis cannot decide, as the
// Python package does: the library's counters (`middleware.backendErrors`, summed over its
// limits), a warning on its `logger` (console by default) at most every 10 seconds while
// requests fail, and once when Redis decides again; and the events `backendError` and
// `backendRecovered` on the middleware, for an app's own alerting.

const { EventEmitter } = require('node:events');

/** Ms between two warnings while Redis cannot decide. */
const WARNING_EVERY = 10_000;

/** What a failed request met, by `onBackendError`. */
const THEN = {
  allow: 'let through uncounted',
  deny: 'refused with 503',
  local: 'decided in this process',
};

class Outage {
  /**
   * `names()`: the limits' names; `available()`: whether Redis answers (the native
   * counters'); `mode`: `onBackendError` as given.
   */
  constructor(logger, mode, names, available) {
    this.events = new EventEmitter();
    this.logger = logger;
    this.mode = String(mode).trim().toLowerCase();
    this.names = names;
    this.available = available;
    /** Errors reported so far; those since the last warning. */
    this.seen = 0;
    this.unwarned = 0;
    /** When the last warning went out (performance.now()), null while Redis decides. */
    this.warnedAt = null;
  }

  /** After a decision on Redis, with the native count of failed requests it returned. */
  check(errors) {
    if (errors === this.seen) {
      if (this.warnedAt !== null && this.available()) this.recovered();
      return;
    }
    const failed = errors - this.seen;
    this.seen = errors;
    this.unwarned += failed;
    this.events.emit('backendError', { failed, errors, onBackendError: this.mode, limits: this.names() });
    const now = performance.now();
    if (this.warnedAt === null || now - this.warnedAt >= WARNING_EVERY) {
      this.warnedAt = now;
      this.logger.warn(
        `sluicegate: Redis cannot decide the limits ${this.names().join(', ')}: ${this.unwarned} request(s) ` +
          `${THEN[this.mode] ?? THEN.allow} (onBackendError '${this.mode}'); ${errors} since the limits were built`,
      );
      this.unwarned = 0;
    }
  }

  recovered() {
    this.warnedAt = null;
    this.unwarned = 0;
    this.logger.warn(`sluicegate: Redis decides the limits ${this.names().join(', ')} again`);
    this.events.emit('backendRecovered', { errors: this.seen, limits: this.names() });
  }
}

module.exports = { Outage, WARNING_EVERY };
