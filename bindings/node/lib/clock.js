'use strict';
// ManualClock: time moved by hand, for tests. Limiters built with the same clock share one
// time, as clones of the engine's ManualClock do.

const { NativeClock } = require('./native');
const { describe } = require('./args');

/** Reads a clock's native half; set below, so that it stays private to the package. */
let nativeOf;

class ManualClock {
  #native;

  /** A clock at `ms` milliseconds (default 0, which window algorithms take as the UNIX epoch). */
  constructor(ms = 0) {
    this.#native = new NativeClock(time(ms, 'new ManualClock(ms)'));
  }

  /** Moves time forward by `ms` milliseconds (fractions allowed, rounded to the nanosecond). */
  advance(ms) {
    this.#native.advance(time(ms, 'advance(ms)'));
  }

  /** Sets the time to `ms` milliseconds (it may go backwards). */
  set(ms) {
    this.#native.set(time(ms, 'set(ms)'));
  }

  /** The time, in milliseconds. */
  get now() {
    return this.#native.now();
  }

  static {
    nativeOf = (clock) => clock.#native;
  }
}

function time(ms, what) {
  if (typeof ms !== 'number') throw new TypeError(`${what}: a time must be a number of milliseconds, got ${describe(ms)}`);
  if (!(ms >= 0) || ms === Infinity) throw new RangeError(`${what}: a time must be a finite number of milliseconds, 0 or more, got ${ms}`);
  return ms;
}

/**
 * A clock that follows `Date.now()`: a test aid. Jest's and sinon's fake timers replace
 * `Date.now()`, so a limit on this clock moves with them (`jest.advanceTimersByTime(60_000)`
 * ends a one-minute window), where the engine's own clock reads the machine's. Each check on
 * it first sets it to `Date.now()` (milliseconds; a time set back is read as no time passing).
 * Not for production: `Date.now()` is coarser than the engine's clock and follows every
 * adjustment of the system clock.
 */
class DateClock extends ManualClock {
  constructor() {
    super(Date.now());
  }

  /** Sets the clock to `Date.now()`. */
  sync() {
    this.set(Date.now());
  }
}

/** The native clock of `clock` (a ManualClock or DateClock), null when undefined; a TypeError otherwise. */
function nativeClock(clock, what) {
  if (clock === undefined || clock === null) return null;
  if (!(clock instanceof ManualClock)) {
    throw new TypeError(`${what}: \`clock\` must be a ManualClock or a DateClock, got ${describe(clock)}`);
  }
  return nativeOf(clock);
}

/** What brings `clock` up to date before each check: `Date.now()` for a DateClock, else nothing (null). */
function syncOf(clock) {
  if (!(clock instanceof DateClock)) return null;
  const native = nativeOf(clock);
  return () => native.set(Date.now());
}

module.exports = { ManualClock, DateClock, nativeClock, syncOf };
