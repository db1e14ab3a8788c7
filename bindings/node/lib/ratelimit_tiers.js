'use strict';
// `limit` (or `max`) as a function of the request, as express-rate-limit takes it: a higher
// limit for paying customers. Limits are the engine's, fixed when made, so each distinct
// number the function returns gets its own middleware (its own native limiter and tables,
// built the first time the number is seen), out of a bounded set: at most `maxTiers`
// distinct numbers (default 16), a TypeError through `next` past that. Nothing is counted
// here: each request is decided by the middleware of its tier.

const { describe, wholeNumber, withCode } = require('./args');

/** The middleware for `options` whose `limit`/`max` is a function; `make(options)` builds one
 * middleware for a fixed number. */
function tiered(options, make) {
  const name = options.limit !== undefined ? 'limit' : 'max';
  const fn = options[name];
  const maxTiers = wholeNumber(options.maxTiers, 'maxTiers', 1, 1024, 16);
  const { maxTiers: _, ...rest } = options;
  // Checks every other option now, as a fixed limit would: with the function's first answer
  // unknown, by a limit of 1.
  make({ ...rest, [name]: 1 });
  // The run-time warnings, given by the first middleware made, not again by every tier.
  const quiet = rest.validate === false ? false : { ...(typeof rest.validate === 'object' ? rest.validate : {}), headersDraftVersion: false };
  const tiers = new Map();
  /** Listeners of the tiers' events: every tier, made or to come, gets them. */
  const listeners = [];

  function tier(value) {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      throw withCode(new TypeError(`rateLimit: \`${name}\` returned ${describe(value)}: it must return a whole number of requests`), 'ERR_SLUICEGATE_INVALID_LIMIT');
    }
    let middleware = tiers.get(value);
    if (middleware === undefined) {
      if (tiers.size >= maxTiers) {
        throw withCode(new TypeError(`rateLimit: \`${name}\` returned a ${maxTiers + 1}th distinct limit (${value}); at most \`maxTiers\` (${maxTiers}) are kept, each with its own tables`), 'ERR_SLUICEGATE_TOO_MANY_TIERS');
      }
      middleware = make({ ...rest, [name]: value, validate: quiet });
      for (const [method, event, listener] of listeners) middleware[method](event, listener);
      tiers.set(value, middleware);
    }
    return middleware;
  }

  const middleware = function rateLimitTiered(req, res, next) {
    let value;
    try {
      value = fn(req, res);
    } catch (error) {
      return next(error);
    }
    const go = (v) => {
      let middleware;
      try {
        middleware = tier(v);
      } catch (error) {
        return next(error);
      }
      middleware(req, res, next);
    };
    if (value && typeof value.then === 'function') value.then(go, next);
    else go(value);
  };
  /** Forgets `key` in every tier made so far. */
  middleware.resetKey = async (key) => {
    const held = await Promise.all([...tiers.values()].map((m) => m.resetKey(key)));
    return held.some(Boolean);
  };
  /** `getKey` of the first tier made that holds hits for `key` (a client stays in one tier
   * while its limit stays the same), or undefined. */
  middleware.getKey = async (key, limitName) => {
    for (const tier of tiers.values()) {
      const found = await tier.getKey(key, limitName);
      if (found !== undefined) return found;
    }
    if (typeof key !== 'string') throw new TypeError(`rateLimit: getKey(key): a key must be a string, got ${describe(key)}`);
    return undefined;
  };
  middleware.on = (event, listener) => {
    listeners.push(['on', event, listener]);
    for (const t of tiers.values()) t.on(event, listener);
    return middleware;
  };
  middleware.off = (event, listener) => {
    const at = listeners.findIndex(([, e, l]) => e === event && l === listener);
    if (at >= 0) listeners.splice(at, 1);
    for (const t of tiers.values()) t.off(event, listener);
    return middleware;
  };
  const sum = (counter) => [...tiers.values()].reduce((n, t) => n + t[counter], 0);
  Object.defineProperties(middleware, {
    backendErrors: { get: () => sum('backendErrors') },
    backendFallbacks: { get: () => sum('backendFallbacks') },
    backendAvailable: { get: () => [...tiers.values()].every((t) => t.backendAvailable) },
    names: { get: () => [...tiers.values()][0]?.names ?? [] },
  });
  return middleware;
}

module.exports = { tiered };
