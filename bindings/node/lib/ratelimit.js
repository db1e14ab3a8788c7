'use strict';
// rateLimit(options): connect-style middleware for express 4 and 5, or anything that calls
// (req, res, next), plain `http` servers included (only Node's own res.setHeader,
// res.statusCode and res.end are used). Each request is decided by the library's one HTTP
// decision in one native call, from its method, URL, raw headers and the socket's peer
// address (never express's `req.ip` or `trust proxy`: the trusted-proxy rule is the
// library's), with the keys the user's functions return; the headers and refusals are the
// library's, byte for byte what the Rust tower layer sends. Decided at once when every limit
// is in process; a Promise when one is on Redis.

const native = require('./native');
const { normalize, unknownDraftWarning } = require('./ratelimit_options');
const { setHeaders } = require('./verdict');
const { describe, built } = require('./args');
const { tiered } = require('./ratelimit_tiers');
const { callError } = require('./redis');
const { refunding } = require('./ratelimit_refund');
const { nativeClock, syncOf } = require('./clock');
const { Outage } = require('./ratelimit_outage');
const { warnings } = require('./ratelimit_warnings');
const { routeName, renamed } = require('./ratelimit_route');

const { httpDecide } = native;

/** Where the native side writes a verdict decided at once, in src/http_limiter.rs's order:
 * status (0: pass), wait (ms), then what the headers report: the limit's index (-1: none),
 * its quota, remaining, the seconds until it resets, and that instant (ms since the epoch). */
const VERDICT = new Float64Array(7);

function rateLimit(options = {}) {
  if (typeof options?.limit === 'function' || typeof options?.max === 'function') return tiered(options, rateLimit);
  let o = normalize(options);
  const clock = nativeClock(o.clock, 'rateLimit(options)');
  const sync = syncOf(o.clock);
  // An unnamed limit on Redis is built when its first request names it (lib/ratelimit_route.js);
  // until then an in-process twin checks the options now, where the middleware is made.
  const build = (opts) => built(() => native.newHttpLimiter(opts.native, VERDICT, clock));
  let named = o.autoName === null;
  let handle = build(named ? o : { ...o, native: { ...o.native, redis: undefined } });
  const { skip, requestPropertyName, statusCode, handler, message } = o;
  let { keyFunctions, names } = o;
  const count = names.length;
  const custom = handler !== null || message !== undefined;
  const used = Object.freeze({ ...options, statusCode, requestPropertyName, message });
  // skipFailedRequests / skipSuccessfulRequests: each request watched, and decided keeping its refund.
  const watch = refunding(o);
  const outage = new Outage(o.logger, o.native.onBackendError, () => names, () => native.httpBackend(handle).available);
  const warn = warnings(() => handle, o);
  const draft8 = o.native.headersDraft === 'draft-8';
  if (o.unknownDraft !== undefined && o.validate.headersDraftVersion) {
    process.emitWarning(unknownDraftWarning(o.unknownDraft), { code: 'SLUICEGATE_HEADERS_DRAFT' });
  }

  /** Settles the limit's name at its first request (its route's, if it runs on one), or at
   * a first `resetKey`/`getKey` before any request (`req` undefined: no route). */
  function nameFrom(req) {
    named = true;
    const name = req === undefined ? null : routeName(req);
    if (name !== null) o = renamed(o, o.autoName, name);
    handle = build(o);
    ({ keyFunctions, names } = o);
  }

  /** Decides with `keys` (the functions' keys, or undefined) and answers; `keep` takes the
   * refund of a request that passed, when responses may give requests back. */
  function decide(req, res, next, keys, keep) {
    const socket = req.socket;
    let verdict;
    try {
      if (sync !== null) sync();
      verdict = httpDecide(handle, req.method, req.originalUrl ?? req.url, req.rawHeaders, socket?.remoteAddress, socket?.remotePort, keys, keep !== undefined);
    } catch (error) {
      return next(error);
    }
    if (typeof verdict === 'string') {
      return settle(req, res, next, keys, VERDICT[0], VERDICT[1], verdict, VERDICT[2], VERDICT[3], VERDICT[4], VERDICT[6]);
    }
    if (Array.isArray(verdict)) {
      // [text, refund]: passed at once, with what giving it back takes.
      keep(verdict[1]);
      return settle(req, res, next, keys, VERDICT[0], VERDICT[1], verdict[0], VERDICT[2], VERDICT[3], VERDICT[4], VERDICT[6]);
    }
    verdict.then(
      (v) => {
        outage.check(v.backendErrors);
        if (v.refund !== undefined) keep(v.refund);
        settle(req, res, next, keys, v.status, v.wait, v.text, v.limit, v.quota, v.remaining, v.resetAt);
      },
      (error) => next(error),
    );
  }

  /** Puts the verdict on the response: passes on (after a leaky bucket's wait) or refuses. */
  function settle(req, res, next, keys, status, wait, text, limit, quota, remaining, resetAt) {
    // The first line: the key the reported limit counted the request under (the library's
    // extractor's), empty for a limit a function keys, whose key is the function's.
    const eol = text.indexOf('\n');
    if (limit >= 0) {
      const key = keys?.[limit] ?? text.slice(0, eol);
      req[requestPropertyName] = new RateLimitInfo(names[limit], quota, remaining, resetAt, key);
    }
    const body = setHeaders(res, text, eol + 1, status !== 0, draft8);
    if (status === 0) {
      if (wait > 0) hold(next, wait);
      else next();
      return;
    }
    if (status === 429 && custom) return overLimit(req, res, next, body);
    res.statusCode = status === 429 ? statusCode : status;
    res.end(body);
  }

  /** A 429 answered by the user's `handler`, or with their `message`. */
  function overLimit(req, res, next, body) {
    res.removeHeader('content-type');
    if (handler !== null) {
      // As express-rate-limit calls it; `message` is the library's sentence (without the
      // body's line end) unless given.
      return handler(req, res, next, message === undefined ? { ...used, message: body.replace(/\n$/, '') } : used);
    }
    res.statusCode = statusCode;
    const value = typeof message === 'function' ? message(req, res) : message;
    if (value && typeof value.then === 'function') value.then((v) => send(res, v), next);
    else send(res, value);
  }

  /** The request's key on each limit a function keys: an array, or a Promise of one when a
   * function returned a Promise. */
  function keysOf(req, res) {
    const keys = new Array(count);
    let waiting = false;
    for (const [i, fn] of keyFunctions) {
      const key = fn(req, res);
      if (key && typeof key.then === 'function') waiting = true;
      keys[i] = key;
    }
    return waiting ? Promise.all(keys).then(checkKeys) : checkKeys(keys);
  }

  /** The keys as strings, null where a function found none; a TypeError for anything else. */
  function checkKeys(keys) {
    for (const [i, , name] of keyFunctions) {
      const key = keys[i];
      if (typeof key === 'string') continue;
      if (key === undefined || key === null) keys[i] = null;
      else if (typeof key === 'number') keys[i] = String(key);
      else throw new TypeError(`rateLimit: the key function of limit "${name}" must return a string (or nothing), got ${describe(key)}`);
    }
    return keys;
  }

  function run(req, res, next, keep) {
    if (keyFunctions === null) return decide(req, res, next, undefined, keep);
    let keys;
    try {
      keys = keysOf(req, res);
    } catch (error) {
      return next(error);
    }
    if (Array.isArray(keys)) decide(req, res, next, keys, keep);
    else keys.then((resolved) => decide(req, res, next, resolved, keep), next);
  }

  const middleware = function rateLimitMiddleware(req, res, next) {
    if (!named) {
      try {
        nameFrom(req);
      } catch (error) {
        return next(error);
      }
    }
    warn(req);
    // Watched from the start, as express-rate-limit does: a client may leave while `skip`, a
    // key function or Redis is being awaited.
    const keep = watch === null ? undefined : watch(req, res);
    if (skip === null) return run(req, res, next, keep);
    let skipped;
    try {
      skipped = skip(req, res);
    } catch (error) {
      return next(error);
    }
    if (skipped && typeof skipped.then === 'function') {
      skipped.then((yes) => (yes ? next() : run(req, res, next, keep)), next);
    } else if (skipped) {
      next();
    } else {
      run(req, res, next, keep);
    }
  };
  /** express-rate-limit's `resetKey`: forgets `key` (as the limits' keys are written: a client
   * address, a header's value, a key function's string) in every limit; a Promise of whether
   * any limit held it. */
  middleware.resetKey = (key) => {
    if (typeof key !== 'string') return Promise.reject(new TypeError(`rateLimit: resetKey(key): a key must be a string, got ${describe(key)}`));
    if (!named) nameFrom(undefined);
    return native.httpReset(handle, key);
  };
  /** express-rate-limit's `getKey`: `{ totalHits, resetTime }` of `key` on the limit named
   * `name` (the first when omitted), read by the engine's peek (consuming nothing), or
   * undefined when the limit holds no hits for it; a Promise. */
  middleware.getKey = (key, name) => {
    if (typeof key !== 'string') return Promise.reject(new TypeError(`rateLimit: getKey(key): a key must be a string, got ${describe(key)}`));
    if (!named) nameFrom(undefined);
    const index = name === undefined ? 0 : names.indexOf(name);
    if (index < 0) return Promise.reject(new TypeError(`rateLimit: getKey(key, name): no limit is named ${describe(name)}; the limits are ${names.map((n) => JSON.stringify(n)).join(', ')}`));
    if (sync !== null) sync();
    return native.httpPeek(handle, index, key).then((a) => {
      if (a.error != null) throw callError(a.error, a.message);
      if (a.used === 0) return undefined;
      return { totalHits: a.used, resetTime: new Date(a.resetAt) };
    });
  };
  /** The key limit `index` (the first when omitted) would count `req` under, found by the
   * library's own extractor (the client address by the trusted-proxy rule for 'ip'), deciding
   * nothing; null for a limit a function keys. The framework adapters' allow lists read it. */
  middleware.requestKey = (req, index = 0) => {
    if (!named) nameFrom(undefined);
    const socket = req.socket;
    return native.httpKey(handle, index, req.method, req.originalUrl ?? req.url, req.rawHeaders, socket?.remoteAddress, socket?.remotePort);
  };
  // Backend failures (limits on Redis): the library's counters, and events to subscribe to.
  Object.defineProperties(middleware, {
    /** Requests Redis could not decide since the limits were built (0 in process). */
    backendErrors: { get: () => native.httpBackend(handle).errors },
    /** Of those, the requests decided in this process (`onBackendError: 'local'`). */
    backendFallbacks: { get: () => native.httpBackend(handle).fallbacks },
    /** False while Redis is known to be unreachable (true in process). */
    backendAvailable: { get: () => native.httpBackend(handle).available },
    /** The limits' names, as the headers and Redis know them (an unnamed limit's, from its route, once it ran). */
    names: { get: () => names.slice() },
  });
  for (const method of ['on', 'off']) {
    middleware[method] = (event, listener) => {
      outage.events[method](event, listener);
      return middleware;
    };
  }
  return middleware;
}

/** What the response reports (its tightest limit), as express-rate-limit's `req.rateLimit`
 * has it; `resetTime` is made when first read. */
class RateLimitInfo {
  #resetAt;

  constructor(name, limit, remaining, resetAt, key) {
    this.name = name;
    this.limit = limit;
    this.used = limit - remaining;
    this.current = this.used; // express-rate-limit's name for it
    this.remaining = remaining;
    this.key = key; // the key the limit counted the request under
    this.#resetAt = resetAt;
  }

  /** When the limit's quota is back: the instant the header's `t` rounds up to seconds, the
   * same for every request of a fixed window (the library's, on the limiter's clock), as
   * `getKey` reports it. */
  get resetTime() {
    return new Date(this.#resetAt);
  }

  toJSON() {
    return { name: this.name, limit: this.limit, used: this.used, current: this.current, remaining: this.remaining, resetTime: this.resetTime, key: this.key };
  }
}

/** Holds a passed request `ms` before passing it on, never less: a Node timer can fire
 * early on its loop's cached clock, and then waits out the rest. */
function hold(next, ms) {
  const at = performance.now() + ms;
  const check = () => {
    const left = at - performance.now();
    if (left > 0) setTimeout(check, left);
    else next();
  };
  setTimeout(check, ms);
}

/** Sends a user's `message`: a string as text, a Buffer as is, anything else as JSON. */
function send(res, value) {
  if (res.writableEnded) return;
  if (typeof value === 'string') {
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    res.end(value);
  } else if (Buffer.isBuffer(value)) {
    res.end(value);
  } else {
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.end(JSON.stringify(value));
  }
}

module.exports = { rateLimit, RateLimitInfo };
