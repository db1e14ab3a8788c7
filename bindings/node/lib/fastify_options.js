'use strict';
// @fastify/rate-limit's options, read as it reads them (its defaults: 1000 requests a minute;
// a number that is not finite falls back to the default; `timeWindow` in ms or as text such
// as '1 minute'), and turned into the options of the `rateLimit` middleware each route's
// hook decides with. Its options with no counterpart here are refused with a sentence.

const { describe, knownOptions } = require('./args');

const WHAT = "register(require('sluicegate/fastify'), options)";

const DEFAULT_MAX = 1000;
const DEFAULT_TIME_WINDOW = 60_000;

/** @fastify/rate-limit's options that do not exist here: why, and what instead. */
const UNSUPPORTED = {
  store: "the store is sluicegate's engine: give `redis: 'redis://host:6379/'` to share limits through Redis",
  nameSpace: 'limits on Redis are named by `name` (default: the route, or `ip` for the global limit)',
  continueExceeding: "a refused request consumes nothing in sluicegate's engine, so it cannot extend the window",
  exponentialBackoff: "the engine's windows do not grow; use a longer `timeWindow`, or `ban`",
  cache: 'use `maxKeys` (the most clients each limit keeps; default 1,000,000)',
};

/** The options this plugin reads: @fastify/rate-limit's and sluicegate's own. */
const KNOWN = [
  // @fastify/rate-limit's
  'global', 'max', 'timeWindow', 'hook', 'allowList', 'keyGenerator', 'errorResponseBuilder',
  'onExceeding', 'onExceeded', 'onBanReach', 'ban', 'addHeaders', 'addHeadersOnExceeding',
  'enableDraftSpec', 'skipOnError', 'ipv6Subnet', 'groupId', 'redis',
  // sluicegate's own (as `rateLimit` reads them)
  'name', 'quota', 'algorithm', 'trustedProxies', 'forwardedHeaders', 'ipv6Prefix', 'redisCluster',
  'onBackendError', 'standardHeaders', 'legacyHeaders', 'maxKeys', 'maxTiers', 'clock', 'logger', 'validate',
];

/** The hooks a route's limit may run in. */
const HOOKS = new Set(['onRequest', 'preParsing', 'preValidation', 'preHandler']);

/** Checks `options` (the plugin's, or a route's `config.rateLimit`) for names this plugin does not take. */
function check(options, what = WHAT) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${what} takes an options object such as { max: 100, timeWindow: '1 minute' }, got ${describe(options)}`);
  for (const name of Object.keys(options)) {
    if (name in UNSUPPORTED) throw new TypeError(`${what}: \`${name}\` (@fastify/rate-limit) has no counterpart here: ${UNSUPPORTED[name]}`);
  }
  knownOptions(options, KNOWN, what);
}

/** `max`: a whole number, a function `(request, key)`, or the default when neither. */
function maxOf(value) {
  if (typeof value === 'function') return value;
  return Number.isFinite(value) && value >= 0 ? Math.trunc(value) : DEFAULT_MAX;
}

/** `timeWindow` in ms: a number, text such as '1 minute' or '30s', a function `(request,
 * key)`, or the default when none of them. */
function timeWindowOf(value) {
  if (typeof value === 'function') return value;
  if (Number.isFinite(value) && value >= 1) return Math.trunc(value);
  if (typeof value === 'string') {
    const ms = parseDuration(value);
    if (ms !== null) return ms;
    throw new RangeError(`${WHAT}: \`timeWindow\` ${JSON.stringify(value)} is not a duration such as '1 minute', '30s' or 60000`);
  }
  return DEFAULT_TIME_WINDOW;
}

const UNITS = {
  ms: 1, msec: 1, msecs: 1, millisecond: 1, milliseconds: 1,
  s: 1000, sec: 1000, secs: 1000, second: 1000, seconds: 1000,
  m: 60_000, min: 60_000, mins: 60_000, minute: 60_000, minutes: 60_000,
  h: 3_600_000, hr: 3_600_000, hrs: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  d: 86_400_000, day: 86_400_000, days: 86_400_000,
  w: 604_800_000, week: 604_800_000, weeks: 604_800_000,
  y: 31_557_600_000, yr: 31_557_600_000, year: 31_557_600_000, years: 31_557_600_000,
};

/** A duration as @fastify/rate-limit's `timeWindow` text (@lukeed/ms's forms: '1 minute',
 * '2h', '500 ms'), in ms; null when it is not one. */
function parseDuration(text) {
  const match = /^\s*(-?\d*\.?\d+)\s*([a-z]*)\s*$/i.exec(text);
  if (!match) return null;
  const unit = match[2] === '' ? 1 : UNITS[match[2].toLowerCase()];
  if (unit === undefined) return null;
  const ms = Math.trunc(Number(match[1]) * unit);
  return ms >= 1 ? ms : null;
}

/** How long `ms` is, in words, as @fastify/rate-limit's default message says it ('1 second',
 * '2 minutes'; @lukeed/ms's long form). */
function inWords(ms) {
  const units = [['day', 86_400_000], ['hour', 3_600_000], ['minute', 60_000], ['second', 1000]];
  for (const [unit, size] of units) {
    if (Math.abs(ms) >= size) {
      const n = Math.round(ms / size);
      return `${n} ${unit}${n === 1 ? '' : 's'}`;
    }
  }
  return `${ms} ms`;
}

/** `ban`: how many refusals in a window before a 403; -1 for none. */
function banOf(value) {
  return Number.isFinite(value) && value >= 0 ? Math.trunc(value) : -1;
}

/** `hook`: where the route's limit runs. */
function hookOf(value) {
  const hook = value || 'onRequest';
  if (!HOOKS.has(hook)) throw new TypeError(`${WHAT}: \`hook\` is one of ${[...HOOKS].map((h) => `'${h}'`).join(', ')}, got ${describe(value)}`);
  return hook;
}

/** Which headers to send, by lower-case name: the library writes them, `toggles` leave some out. */
function toggles(value, name) {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object') throw new TypeError(`${WHAT}: \`${name}\` must be an object such as { 'x-ratelimit-reset': false }, got ${describe(value)}`);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.toLowerCase(), v]));
}

/**
 * The `rateLimit` options for one limit of `max` requests per `timeWindow` ms, from the
 * plugin's merged options `o`: keyed by the key the hook found (`req.key`), named `name`.
 * The library writes draft-6's `RateLimit-Policy`, `RateLimit-Limit`, `-Remaining`, `-Reset`
 * (and `Retry-After` on a refusal), which the plugin sends under @fastify/rate-limit's names
 * (`renames`); sluicegate's `standardHeaders` and `legacyHeaders` may say otherwise.
 */
function middlewareOptions(o, name, max, timeWindow, handler) {
  const own = {};
  for (const k of ['trustedProxies', 'forwardedHeaders', 'ipv6Prefix', 'redis', 'redisCluster', 'maxKeys', 'clock', 'logger', 'validate']) {
    if (o[k] !== undefined) own[k] = o[k];
  }
  // As @fastify/rate-limit reads it: a number outside 0..128 is the default, /64.
  if (o.ipv6Subnet !== undefined && o.ipv6Prefix === undefined) own.ipv6Prefix = Number.isFinite(o.ipv6Subnet) && o.ipv6Subnet >= 0 && o.ipv6Subnet <= 128 ? Math.trunc(o.ipv6Subnet) : 64;
  const draft = o.enableDraftSpec === true;
  const limit = o.quota !== undefined ? { quota: o.quota, algorithm: o.algorithm } : { limit: max, windowMs: timeWindow, algorithm: o.algorithm };
  return {
    ...own,
    ...limit,
    name,
    key: (req) => req.key,
    // Draft-6's three (seconds left), sent under X-RateLimit-* names unless `enableDraftSpec`
    // (`renames`, below); sluicegate's own `standardHeaders`/`legacyHeaders` replace both.
    ...(custom(o) ? { standardHeaders: o.standardHeaders, legacyHeaders: o.legacyHeaders } : { standardHeaders: 'draft-6', legacyHeaders: false }),
    // @fastify/rate-limit's `skipOnError` lets requests through when its store fails.
    onBackendError: o.onBackendError ?? (o.skipOnError === false ? 'deny' : 'allow'),
    handler,
  };
}

/** Whether `o` picks sluicegate's own header forms. */
function custom(o) {
  return o.standardHeaders !== undefined || o.legacyHeaders !== undefined;
}

/** The names @fastify/rate-limit gives the library's draft-6 headers: `X-RateLimit-Limit`,
 * `-Remaining`, `-Reset` (the seconds left, as it sends them), unless `enableDraftSpec` (then
 * draft-6's own names) or sluicegate's header options are given. */
function renames(o) {
  if (custom(o) || o.enableDraftSpec === true) return {};
  return { 'ratelimit-limit': 'x-ratelimit-limit', 'ratelimit-remaining': 'x-ratelimit-remaining', 'ratelimit-reset': 'x-ratelimit-reset' };
}

module.exports = { renames, check, maxOf, timeWindowOf, banOf, hookOf, toggles, inWords, middlewareOptions, WHAT };
