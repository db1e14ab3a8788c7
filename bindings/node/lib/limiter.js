'use strict';
// Limiter (one limit for everything) and KeyedLimiter (a limit per string key): each check
// is one synchronous native call.

const native = require('./native');

const { limiterCheck, limiterDecide, keyedCheck, keyedDecide } = native;
const { OUT, decision } = require('./decision');
const { cost, badKey, limitOptions, wholeNumber, knownOptions, built } = require('./args');
const { nativeClock, syncOf } = require('./clock');

const CHECK = 0;
const PEEK = 1;
const HIT = 2;

class Limiter {
  /** The native limiter: an external handle. */
  #native;
  /** Brings a DateClock up to date before each call; null for any other clock. */
  #sync;

  /** `{ quota, algorithm = 'gcra', clock }`: one limit for everything (`clock`: a ManualClock or a DateClock, for tests). */
  constructor(options) {
    const { quota, algorithm } = limitOptions(options, 'new Limiter(options)');
    knownOptions(options, ['quota', 'algorithm', 'clock'], 'new Limiter(options)');
    const clock = nativeClock(options.clock, 'new Limiter(options)');
    this.#native = built(() => native.newLimiter(quota, algorithm, clock, OUT));
    this.#sync = syncOf(options.clock);
    this.quota = quota;
    this.algorithm = algorithm;
  }

  /** Decides a request of `n` (default 1), consuming it when allowed. */
  check(n) {
    if (this.#sync !== null) this.#sync();
    if (n === undefined) return decision(limiterCheck(this.#native));
    return decision(limiterDecide(this.#native, CHECK, cost(n)));
  }

  /** The answer `check(n)` would give now, consuming nothing. */
  peek(n) {
    if (this.#sync !== null) this.#sync();
    return decision(limiterDecide(this.#native, PEEK, cost(n)));
  }

  /** Records `n` (default 1) whatever the answer; the decision says whether it was within the limit. */
  hit(n) {
    if (this.#sync !== null) this.#sync();
    return decision(limiterDecide(this.#native, HIT, cost(n)));
  }

  /** The largest cost one check can be allowed. */
  get maxCost() {
    return native.limiterMaxCost(this.#native);
  }
}

class KeyedLimiter {
  /** The native limiter: an external handle. */
  #native;
  /** Brings a DateClock up to date before each call; null for any other clock. */
  #sync;

  /** `{ quota, algorithm = 'gcra', clock, maxKeys }`: a limit per string key. */
  constructor(options) {
    const { quota, algorithm } = limitOptions(options, 'new KeyedLimiter(options)');
    knownOptions(options, ['quota', 'algorithm', 'clock', 'maxKeys'], 'new KeyedLimiter(options)');
    const maxKeys = wholeNumber(options.maxKeys, 'maxKeys', 1, 0xffffffff, 0);
    const clock = nativeClock(options.clock, 'new KeyedLimiter(options)');
    this.#native = built(() => native.newKeyed(quota, algorithm, clock, maxKeys, OUT));
    this.#sync = syncOf(options.clock);
    this.quota = quota;
    this.algorithm = algorithm;
  }

  /** Decides a request of `n` (default 1) for `key`, consuming it when allowed. */
  check(key, n) {
    if (typeof key !== 'string') throw badKey(key);
    if (this.#sync !== null) this.#sync();
    if (n === undefined) return decision(keyedCheck(this.#native, key));
    return decision(keyedDecide(this.#native, key, CHECK, cost(n)));
  }

  /** The answer `check(key, n)` would give now, consuming nothing. */
  peek(key, n) {
    if (typeof key !== 'string') throw badKey(key);
    if (this.#sync !== null) this.#sync();
    return decision(keyedDecide(this.#native, key, PEEK, cost(n)));
  }

  /** Records `n` (default 1) for `key` whatever the answer. */
  hit(key, n) {
    if (typeof key !== 'string') throw badKey(key);
    if (this.#sync !== null) this.#sync();
    return decision(keyedDecide(this.#native, key, HIT, cost(n)));
  }

  /** Forgets `key` (the engine's reset): its next request starts afresh. Whether it was held. */
  reset(key) {
    if (typeof key !== 'string') throw badKey(key);
    return native.keyedReset(this.#native, key);
  }

  /** Keys currently held (idle keys are dropped by the engine as it goes). */
  get size() {
    return native.keyedSize(this.#native);
  }

  /** The largest cost one check can be allowed. */
  get maxCost() {
    return native.keyedMaxCost(this.#native);
  }
}

module.exports = { Limiter, KeyedLimiter, CHECK, PEEK, HIT };
