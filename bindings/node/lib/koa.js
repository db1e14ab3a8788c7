'use strict';
// `sluicegate/koa`: koa middleware taking koa-ratelimit's options
// (`app.use(require('sluicegate/koa')({ duration: 60_000, max: 100 }))`). Each request is
// decided by the library's one HTTP decision through `rateLimit` (lib/adapter_decide.js), from
// the Node request koa wraps (`ctx.req`): the client address is the library's (the socket's
// peer, or through `trustedProxies` only; never koa's `ctx.ip` or `app.proxy`), the headers
// and refusals are the library's, put on koa's response. koa-ratelimit's header names may
// rename the library's `X-RateLimit-*` trio; their values stay the library's.

const { rateLimit } = require('./ratelimit');
const { decide, refuse } = require('./adapter_decide');
const { RATE_LIMIT_HEADERS } = require('./verdict');
const { describe, knownOptions } = require('./args');

const WHAT = "require('sluicegate/koa')(options)";

/** koa-ratelimit's options that do not exist here: why, and what instead. */
const UNSUPPORTED = {
  driver: "the store is sluicegate's engine: in process by default, or give `redis: 'redis://host:6379/'`",
  db: "give `redis: 'redis://host:6379/'` (a URL, not a client): the limit is then shared by every process",
};

/** The options this middleware reads: koa-ratelimit's and sluicegate's own. */
const KNOWN = [
  'duration', 'max', 'id', 'headers', 'disableHeader', 'whitelist', 'blacklist', 'errorMessage', 'throw', 'onLimited',
  'name', 'quota', 'algorithm', 'trustedProxies', 'forwardedHeaders', 'ipv6Prefix', 'redis', 'redisCluster',
  'onBackendError', 'standardHeaders', 'legacyHeaders', 'maxKeys', 'clock', 'logger', 'validate',
];

/** koa-ratelimit's default names of the library's legacy trio. */
const TRIO = { total: 'x-ratelimit-limit', remaining: 'x-ratelimit-remaining', reset: 'x-ratelimit-reset' };

function koaRateLimit(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${WHAT} takes an options object such as { duration: 60000, max: 100 }, got ${describe(options)}`);
  for (const name of Object.keys(options)) {
    if (name in UNSUPPORTED) throw new TypeError(`${WHAT}: \`${name}\` (koa-ratelimit) has no counterpart here: ${UNSUPPORTED[name]}`);
  }
  knownOptions(options, KNOWN, WHAT);
  for (const name of ['id', 'whitelist', 'blacklist', 'onLimited']) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new TypeError(`${WHAT}: \`${name}\` must be a function of ctx, got ${describe(options[name])}`);
  }
  const { id, whitelist, blacklist, errorMessage, onLimited } = options;
  const throws = options.throw === true;
  const renames = renaming(options.headers);
  const own = {};
  for (const k of ['trustedProxies', 'forwardedHeaders', 'ipv6Prefix', 'redis', 'redisCluster', 'onBackendError', 'maxKeys', 'clock', 'logger', 'validate']) {
    if (options[k] !== undefined) own[k] = options[k];
  }
  const hidden = options.disableHeader === true;
  // koa-ratelimit's defaults: 2500 requests an hour, in windows from each client's first request.
  const limit = options.quota !== undefined
    ? { quota: options.quota, algorithm: options.algorithm }
    : { limit: options.max ?? 2500, windowMs: options.duration ?? 3_600_000, algorithm: options.algorithm };
  const middleware = rateLimit({
    ...own,
    ...limit,
    name: options.name ?? (id === undefined ? 'ip' : 'id'),
    // `id(ctx)`'s key, found before deciding; else the library's client address.
    key: id === undefined ? 'ip' : (req) => req.key,
    // koa-ratelimit sends the X-RateLimit-* trio (the library's, its reset a Unix timestamp
    // in seconds, as koa-ratelimit's); `standardHeaders` adds RateLimit-Policy and RateLimit.
    standardHeaders: hidden ? false : options.standardHeaders ?? false,
    legacyHeaders: hidden ? false : options.legacyHeaders ?? true,
    handler: refuse,
  });

  const koaMiddleware = async function sluicegateKoa(ctx, next) {
    let key;
    if (id !== undefined) {
      key = await id(ctx);
      // As koa-ratelimit: an id of false is not limited.
      if (key === false) return next();
    }
    if (whitelist !== undefined && (await whitelist(ctx))) return next();
    if (blacklist !== undefined && (await blacklist(ctx))) return ctx.throw(403);
    const raw = ctx.req;
    const req = { method: raw.method, url: raw.url, rawHeaders: raw.rawHeaders, socket: raw.socket, key: key ?? null };
    const { status, headers, body, info } = await decide(middleware, req);
    ctx.state.rateLimit = info;
    if (status === 0) {
      put(ctx, headers, renames, false);
      return next();
    }
    put(ctx, headers, renames, true);
    if (status === 429 && typeof onLimited === 'function') onLimited(ctx);
    const message = status === 429 && errorMessage !== undefined ? errorMessage : body;
    if (throws) {
      const fields = Object.fromEntries(headers.map(([name, value]) => [renames[name] ?? name, value]));
      return ctx.throw(status, typeof message === 'string' ? message : JSON.stringify(message), { headers: fields });
    }
    ctx.status = status;
    ctx.body = message;
    return undefined;
  };
  /** Forgets `key` (a client address as the library writes it, or an `id`'s string). */
  koaMiddleware.resetKey = (key) => middleware.resetKey(key);
  return koaMiddleware;
}

/** koa-ratelimit's `headers: { total, remaining, reset }`: other names for the library's trio. */
function renaming(value) {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object') throw new TypeError(`${WHAT}: \`headers\` must be an object such as { remaining: 'Rate-Limit-Remaining' }, got ${describe(value)}`);
  knownOptions(value, Object.keys(TRIO), `${WHAT}: headers`);
  const renames = {};
  for (const [k, name] of Object.entries(value)) {
    if (typeof name !== 'string' || name === '') throw new TypeError(`${WHAT}: \`headers.${k}\` must be a header name, got ${describe(name)}`);
    renames[TRIO[k]] = name;
  }
  return renames;
}

/** Puts the library's headers on koa's response, renamed as asked; a refusal's replace any
 * an earlier limit set. */
function put(ctx, headers, renames, refusing) {
  if (refusing) for (const name of [...RATE_LIMIT_HEADERS, ...Object.values(renames)]) ctx.remove(name);
  for (const [name, value] of headers) ctx.set(renames[name] ?? name, value);
}

module.exports = koaRateLimit;
module.exports.default = koaRateLimit;
module.exports.ratelimit = koaRateLimit;
