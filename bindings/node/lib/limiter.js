'use strict';
// Limiter (one limit for everything) and KeyedLimiter (a limit per string key): each check
// is one synchronous native call.

const { NativeLimiter, NativeKeyed } = require('./native');
const { OUT, decision } = require('./decision');
const { cost, badKey, limitOptions, wholeNumber } = require('./args');
const { nativeClock } = require('./clock');

const CHECK = 0;
const PEEK = 1;
const HIT = 2;

class Limiter {
  #native;

  /** `{ quota, algorithm = 'gcra', clock }`: one limit for everything. */
  constructor(options) {
    const { quota, algorithm } = limitOptions(options, 'new Limiter(options)');
    this.#native = new NativeLimiter(quota, algorithm, nativeClock(options.clock, 'new Limiter(options)'), OUT);
    this.quota = quota;
    this.algorithm = algorithm;
  }

  /** Decides a request of `n` (default 1), consuming it when allowed. */
  check(n) {
    return decision(this.#native.decide(CHECK, cost(n)));
  }

  /** The answer `check(n)` would give now, consuming nothing. */
  peek(n) {
    return decision(this.#native.decide(PEEK, cost(n)));
  }

  /** Records `n` (default 1) whatever the answer; the decision says whether it was within the limit. */
  hit(n) {
    return decision(this.#native.decide(HIT, cost(n)));
  }

  /** The largest cost one check can be allowed. */
  get maxCost() {
    return this.#native.maxCost;
  }
}

class KeyedLimiter {
  #native;

  /** `{ quota, algorithm = 'gcra', clock, maxKeys }`: a limit per string key. */
  constructor(options) {
    const { quota, algorithm } = limitOptions(options, 'new KeyedLimiter(options)');
    const maxKeys = wholeNumber(options.maxKeys, 'maxKeys', 1, 0xffffffff, 0);
    const clock = nativeClock(options.clock, 'new KeyedLimiter(options)');
    this.#native = new NativeKeyed(quota, algorithm, clock, maxKeys, OUT);
    this.quota = quota;
    this.algorithm = algorithm;
  }

  /** Decides a request of `n` (default 1) for `key`, consuming it when allowed. */
  check(key, n) {
    if (typeof key !== 'string') throw badKey(key);
    return decision(this.#native.decide(key, CHECK, cost(n)));
  }

  /** The answer `check(key, n)` would give now, consuming nothing. */
  peek(key, n) {
    if (typeof key !== 'string') throw badKey(key);
    return decision(this.#native.decide(key, PEEK, cost(n)));
  }

  /** Records `n` (default 1) for `key` whatever the answer. */
  hit(key, n) {
    if (typeof key !== 'string') throw badKey(key);
    return decision(this.#native.decide(key, HIT, cost(n)));
  }

  /** Keys currently held (idle keys are dropped by the engine as it goes). */
  get size() {
    return this.#native.size;
  }

  /** The largest cost one check can be allowed. */
  get maxCost() {
    return this.#native.maxCost;
  }
}

module.exports = { Limiter, KeyedLimiter, CHECK, PEEK, HIT };
