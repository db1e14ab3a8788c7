'use strict';
// rateLimit's options, checked and turned into what the native HTTP limiter takes. The
// contract's names (DESIGN.md §2: limits, trustedProxies, ipv6Prefix, redis, onBackendError),
// and express-rate-limit's where one means the same thing, so that switching is an import
// and a few options; its options that have no counterpart here are refused with a sentence
// saying why and what to use instead, rather than silently ignored.

const { limitOptions, wholeNumber, describe, knownOptions } = require('./args');
const native = require('./native');
const { redisTarget } = require('./redis_target');

const WHAT = 'rateLimit(options)';

/** express-rate-limit's options that do not exist here: why, and what instead. */
const UNSUPPORTED = {
  store: "a store is sluicegate's own: give `redis: 'redis://host:6379/'` to share limits through Redis",
  passOnStoreError: "use `onBackendError: 'allow'` (the default: requests pass while Redis is down) or 'deny' (503 with Retry-After: 1)",
  retryAfter: "Retry-After is the engine's exact time until the request would be admitted, rounded up to seconds",
  headers: 'use `legacyHeaders`',
};

/** The options a middleware takes (besides the shorthand's). */
const KNOWN = new Set([
  'limits', 'trustedProxies', 'forwardedHeaders', 'ipv6Prefix', 'ipv6Subnet', 'redis', 'redisCluster',
  'onBackendError', 'standardHeaders', 'legacyHeaders', 'skip', 'handler', 'message', 'statusCode',
  'requestPropertyName', 'validate', 'maxKeys', 'skipFailedRequests', 'skipSuccessfulRequests', 'requestWasSuccessful',
  'logger', 'clock',
]);

/** The shorthand's options: one limit, given at the top level. */
const SHORTHAND = new Set(['quota', 'algorithm', 'key', 'keyGenerator', 'name', 'identifier', 'cost', 'windowMs', 'limit', 'max']);

/**
 * `{ native, keyFunctions, names, skip, handler, message, statusCode, requestPropertyName,
 * skipFailedRequests, skipSuccessfulRequests, requestWasSuccessful }`: the native limiter's
 * options, `[index, fn]` for each limit keyed by a function, the limits' names, and the
 * JavaScript-side options.
 */
function normalize(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${WHAT} takes an options object such as { quota: '5/second' }, got ${describe(options)}`);
  }
  for (const name of Object.keys(options)) {
    if (name === 'maxTiers') throw new TypeError(`${WHAT}: \`maxTiers\` bounds the distinct limits of \`limit\` (or \`max\`) as a function; here it is a number`);
    if (name in UNSUPPORTED) throw new TypeError(`${WHAT}: \`${name}\` (express-rate-limit) has no counterpart here: ${UNSUPPORTED[name]}`);
  }
  knownOptions(options, [...KNOWN, ...SHORTHAND, 'maxTiers'], WHAT);
  const limits = limitsOf(options);
  if (options.redis !== undefined && options.redisCluster !== undefined) {
    throw new TypeError(`${WHAT}: give \`redis\` (one server) or \`redisCluster\` (a Cluster's seed nodes), not both`);
  }
  const redisName = options.redis !== undefined ? 'redis' : 'redisCluster';
  const redis = redisTarget(options.redis ?? options.redisCluster, redisName, WHAT);
  // Their values are read by the library (the spellings Rust and Python accept), only their type here.
  const onBackendError = text(options.onBackendError, 'onBackendError', "'allow', 'deny' or 'local'", 'allow');
  const forwardedHeaders = text(options.forwardedHeaders, 'forwardedHeaders', "'x-forwarded-for', 'forwarded' or 'both'", 'x-forwarded-for');
  const native = {
    limits: limits.map(({ fn, autoNamed, baseName, ...limit }) => limit),
    trustedProxies: trustedProxies(options.trustedProxies),
    forwardedHeaders,
    ipv6Prefix: ipv6Prefix(options),
    redis,
    redisCluster: options.redisCluster !== undefined,
    onBackendError,
    ...standardHeaders(options.standardHeaders),
    // On by default, as in express-rate-limit since v7 (the version this package follows).
    legacyHeaders: flag(options.legacyHeaders, 'legacyHeaders', true),
    // Keys each in-process limit holds at most: the library's default bound (1,000,000) unless given.
    maxKeys: wholeNumber(options.maxKeys, 'maxKeys', 1, 0xffffffff, undefined),
  };
  const keyFunctions = limits.flatMap((limit, i) => (limit.fn ? [[i, limit.fn, limit.name]] : []));
  const requestPropertyName = options.requestPropertyName ?? 'rateLimit';
  if (typeof requestPropertyName !== 'string' || requestPropertyName === '') {
    throw new TypeError(`${WHAT}: \`requestPropertyName\` must be a non-empty string, got ${describe(requestPropertyName)}`);
  }
  const unknownDraft = native.unknownDraft;
  delete native.unknownDraft;
  return {
    native,
    // The shorthand without a name, on Redis, is named when it first runs on a route
    // (lib/ratelimit_route.js); in process its tables are its own whatever its name.
    autoName: limits[0].autoNamed && redis !== undefined ? limits[0].baseName : null,
    unknownDraft,
    validate: validations(options.validate),
    logger: logger(options.logger),
    clock: options.clock,
    keyFunctions: keyFunctions.length > 0 ? keyFunctions : null,
    names: limits.map((l) => l.name),
    skip: optionalFunction(options.skip, 'skip'),
    handler: optionalFunction(options.handler, 'handler'),
    message: options.message,
    statusCode: wholeNumber(options.statusCode, 'statusCode', 100, 599, 429),
    requestPropertyName,
    // express-rate-limit's: which responses give their request back (lib/ratelimit_refund.js).
    skipFailedRequests: flag(options.skipFailedRequests, 'skipFailedRequests', false),
    skipSuccessfulRequests: flag(options.skipSuccessfulRequests, 'skipSuccessfulRequests', false),
    requestWasSuccessful: optionalFunction(options.requestWasSuccessful, 'requestWasSuccessful') ?? ((_req, res) => res.statusCode < 400),
  };
}

/** The limits: `options.limits`, or the one limit of the shorthand. */
function limitsOf(options) {
  const shorthand = Object.keys(options).filter((name) => SHORTHAND.has(name));
  if (options.limits === undefined) {
    const one = shorthandLimit(options);
    return parts({ ...limit(one, WHAT, one.closed), autoNamed: one.autoNamed, baseName: one.name });
  }
  if (shorthand.length > 0) {
    throw new TypeError(`${WHAT}: give \`limits\` or one limit's options (${shorthand.map((n) => `\`${n}\``).join(', ')}), not both`);
  }
  if (!Array.isArray(options.limits) || options.limits.length === 0) {
    throw new TypeError(`${WHAT}: \`limits\` must be a non-empty array of { name, key, quota, algorithm, cost }, got ${describe(options.limits)}`);
  }
  return options.limits.map((l, i) => {
    const what = `${WHAT}: limits[${i}]`;
    if (l === null || typeof l !== 'object') throw new TypeError(`${what} must be an object such as { name: 'ip', key: 'ip', quota: '5/second' }, got ${describe(l)}`);
    if (typeof l.name !== 'string') throw new TypeError(`${what}: \`name\` must be a string (it names the limit in the headers and on Redis), got ${describe(l.name)}`);
    return limit(l, what);
  }).flatMap(parts);
}

/**
 * A limit whose quota names several (`'5/minute; 100/hour'`, as `limits` and slowapi write
 * them) as one limit per quota, named `NAME-1`, `NAME-2`..., decided all-or-nothing by the
 * library like any limits. The library reads the string; one it cannot read is left whole,
 * for the limit's own error.
 */
function parts(l) {
  if (typeof l.quota !== 'string') return [l];
  let quotas;
  try {
    quotas = native.quotaParts(l.quota);
  } catch {
    return [l];
  }
  return quotas.length < 2 ? [l] : quotas.map((quota, i) => ({ ...l, name: `${l.name}-${i + 1}`, quota }));
}

/**
 * The shorthand's limit: `quota`, or express-rate-limit's `windowMs` + `limit` (or `max`),
 * which is exactly the quota `<limit>/<windowMs>ms` counted in fixed windows anchored at each
 * client's first request, as it counts (`windowed`: the native side anchors a fixed window).
 * Keyed by client IP unless `key` (or `keyGenerator`) says otherwise, named after its key
 * (`ip`, `global`, `header:NAME`; `key` for a function) unless `name` (or `identifier`) is given.
 */
function shorthandLimit(options) {
  // No limit at all: express-rate-limit's defaults, 5 per minute.
  const windowed = options.windowMs !== undefined || options.limit !== undefined || options.max !== undefined || options.quota === undefined;
  if (windowed && options.quota !== undefined) {
    throw new TypeError(`${WHAT}: give \`quota\` or \`windowMs\` + \`limit\`, not both`);
  }
  if (options.limit !== undefined && options.max !== undefined) throw new TypeError(`${WHAT}: give \`limit\` or \`max\`, not both`);
  if (options.key !== undefined && options.keyGenerator !== undefined) throw new TypeError(`${WHAT}: give \`key\` or \`keyGenerator\`, not both`);
  if (options.name !== undefined && options.identifier !== undefined) throw new TypeError(`${WHAT}: give \`name\` or \`identifier\`, not both`);
  let quota = options.quota;
  let algorithm = options.algorithm;
  let closed = false;
  let draft8Name;
  if (windowed) {
    const count = wholeNumber(options.limit ?? options.max, options.max !== undefined ? 'max' : 'limit', 0, 0xffffffff, 5); // express-rate-limit's defaults
    const windowMs = wholeNumber(options.windowMs, 'windowMs', 1, Number.MAX_SAFE_INTEGER, 60_000);
    // A limit of 0 blocks every request, as in express-rate-limit v7: the native limit then
    // refuses all (the engine's quotas start at 1; the quota only gives the window).
    closed = count === 0;
    quota = `${closed ? 1 : count}/${windowMs}ms`;
    algorithm ??= 'fixed-window';
    if (options.standardHeaders === 'draft-8') draft8Name = identifier(count, windowMs);
  }
  if (quota === undefined) throw new TypeError(`${WHAT}: give \`limits\`, or one limit's \`quota\` such as '5/second'`);
  const key = options.key ?? options.keyGenerator ?? 'ip';
  const name = options.name ?? options.identifier ?? draft8Name ?? (typeof key === 'string' ? key : 'key');
  if (typeof name !== 'string') throw new TypeError(`${WHAT}: \`name\` must be a string, got ${describe(name)}`);
  // Named by nothing the user wrote: the name may come from the route (lib/ratelimit_route.js).
  const autoNamed = options.name === undefined && options.identifier === undefined && draft8Name === undefined;
  return { name, key, quota, algorithm, cost: options.cost, closed, windowed, autoNamed };
}

/**
 * express-rate-limit's default `identifier`, the quota's name in draft-8's headers:
 * `5-in-1min`, `100-in-2hrs` for `limit` requests per `windowMs`.
 */
function identifier(limit, windowMs) {
  const seconds = windowMs / 1000;
  const [value, unit] = seconds < 60 ? [seconds, 'sec']
    : seconds < 3600 ? [seconds / 60, 'min']
      : seconds < 86400 ? [seconds / 3600, 'hr'] : [seconds / 86400, 'day'];
  const plural = unit !== 'sec' && unit !== 'min' && value > 1 ? 's' : '';
  return `${limit}-in-${value}${unit}${plural}`;
}

/** One limit as the native side takes it, with `fn` when a function computes its key;
 * `closed` for a limit of 0, which refuses every request. */
function limit(l, what, closed = false) {
  const { quota, algorithm } = limitOptions(l, what);
  const key = l.key ?? 'ip';
  if (typeof key !== 'string' && typeof key !== 'function') {
    throw new TypeError(`${what}: \`key\` is 'ip', 'global', 'header:NAME' or a function of the request, got ${describe(key)}`);
  }
  const fn = typeof key === 'function' ? key : null;
  return {
    name: l.name,
    key: fn ? '' : key,
    given: fn !== null,
    quota,
    algorithm,
    cost: wholeNumber(l.cost, 'cost', 0, 0xffffffff, 1),
    closed,
    windowed: l.windowed === true,
    fn,
  };
}

function trustedProxies(value) {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new TypeError(`${WHAT}: \`trustedProxies\` must be an array of networks such as ['10.0.0.0/8', '::1'], got ${describe(value)}`);
  }
  return value;
}

/** A string option (`fallback` when not given), its value left to the library to read. */
function text(value, name, expected, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw new TypeError(`${WHAT}: \`${name}\` is ${expected}, got ${describe(value)}`);
  return value;
}

/** `ipv6Prefix`, or express-rate-limit's `ipv6Subnet` (the same thing; `false`: no grouping). */
function ipv6Prefix(options) {
  if (options.ipv6Prefix !== undefined && options.ipv6Subnet !== undefined) {
    throw new TypeError(`${WHAT}: give \`ipv6Prefix\` or \`ipv6Subnet\`, not both`);
  }
  if (options.ipv6Subnet === false) return 128;
  if (typeof options.ipv6Subnet === 'function') throw new TypeError(`${WHAT}: \`ipv6Subnet\` must be a number here`);
  const name = options.ipv6Subnet !== undefined ? 'ipv6Subnet' : 'ipv6Prefix';
  return wholeNumber(options.ipv6Prefix ?? options.ipv6Subnet, name, 0, 128, 64);
}

/**
 * `{ standardHeaders, headersDraft }`: on by default in draft-10's form (`RateLimit-Policy`
 * and `RateLimit` by name); `true` is draft-6, as express-rate-limit reads it; or a draft by
 * name. The library's one header writer writes each form.
 */
function standardHeaders(value) {
  if (value === undefined) return { standardHeaders: true, headersDraft: undefined };
  if (value === false) return { standardHeaders: false, headersDraft: undefined };
  if (value === true) return { standardHeaders: true, headersDraft: 'draft-6' };
  if (['draft-6', 'draft-7', 'draft-8', 'draft-10'].includes(value)) return { standardHeaders: true, headersDraft: value };
  // As express-rate-limit: an unknown draft sends no standard headers, and is warned about
  // once at the first request (`validate: { headersDraftVersion: false }` silences it).
  return { standardHeaders: false, headersDraft: undefined, unknownDraft: value };
}

/** The warning for an unknown `standardHeaders` value. */
function unknownDraftWarning(value) {
  return `rateLimit: \`standardHeaders\` ${describe(value)} is not a draft this package writes, so no standard ` +
    "headers are sent: use true (draft-6, as express-rate-limit reads it), false, 'draft-6', 'draft-7', " +
    "'draft-8' or 'draft-10' (the default when omitted)";
}

/**
 * express-rate-limit's `validate`: `false` silences every run-time warning of this package;
 * an object silences those set to `false` (`trustProxy`, `headersDraftVersion`, `unixSocket`,
 * or `default: false` for all but those set to `true`). Its other checks are the library's
 * rules here, and their names are accepted and ignored.
 */
function validations(value) {
  const all = { trustProxy: true, headersDraftVersion: true, unixSocket: true };
  if (value === undefined || value === true) return all;
  if (value === false) return { trustProxy: false, headersDraftVersion: false, unixSocket: false };
  if (value === null || typeof value !== 'object') {
    throw new TypeError(`${WHAT}: \`validate\` must be a boolean or an object such as { trustProxy: false }, got ${describe(value)}`);
  }
  const fallback = value.default ?? true;
  for (const name of Object.keys(all)) all[name] = value[name] ?? fallback;
  return all;
}

/** express-rate-limit's `logger`: an object with `warn` and `error` functions; `console` by default. */
function logger(value) {
  if (value === undefined) return console;
  if (value === null || typeof value !== 'object' || typeof value.warn !== 'function' || typeof value.error !== 'function') {
    throw new TypeError(`${WHAT}: \`logger\` must be an object with \`warn\` and \`error\` functions (console is the default), got ${describe(value)}`);
  }
  return value;
}

function flag(value, name, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${WHAT}: \`${name}\` must be a boolean, got ${describe(value)}`);
  return value;
}

function optionalFunction(value, name) {
  if (value === undefined) return null;
  if (typeof value !== 'function') throw new TypeError(`${WHAT}: \`${name}\` must be a function, got ${describe(value)}`);
  return value;
}

module.exports = { normalize, unknownDraftWarning };
