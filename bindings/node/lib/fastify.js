'use strict';
// `sluicegate/fastify`: a fastify plugin taking @fastify/rate-limit's options
// (`app.register(require('sluicegate/fastify'), { max: 100, timeWindow: '1 minute' })`).
// Each request is decided by the library's one HTTP decision through `rateLimit`
// (lib/adapter_decide.js), from the raw request fastify wraps: the client address is the
// library's (the socket's peer, or through `trustedProxies` only; never fastify's
// `request.ip`), the headers are the library's, put on the reply. The plugin translates
// options, finds keys with the user's `keyGenerator`, and answers as @fastify/rate-limit
// does (an error from `errorResponseBuilder`, `onExceeding`/`onExceeded`, `ban`).

const { rateLimit } = require('./ratelimit');
const { KeyedLimiter } = require('./limiter');
const { decide, refuse } = require('./adapter_decide');
const { RATE_LIMIT_HEADERS } = require('./verdict');
const { withCode } = require('./args');
const o_ = require('./fastify_options');

/** fastify-plugin's markers (without depending on it): the plugin's hooks and decorators
 * apply to the instance it is registered on, not a child of it. */
const SKIP_OVERRIDE = Symbol.for('skip-override');
const DISPLAY_NAME = Symbol.for('fastify.display-name');
const META = Symbol.for('plugin-meta');

async function sluicegateFastify(fastify, settings = {}) {
  o_.check(settings);
  const ran = Symbol('sluicegate.rateLimitRan');
  fastify.decorateRequest(ran, false);
  // One reader of client keys by the library's rule (the allow list and `max(request, key)`
  // need a request's key before it is decided): the same proxies and IPv6 grouping.
  const { trustedProxies, forwardedHeaders, ipv6Prefix } = o_.middlewareOptions(settings, 'ip', 1, 1000, refuse);
  const keyReader = rateLimit({ quota: '1/second', trustedProxies, forwardedHeaders, ipv6Prefix, validate: false });
  /** Route limits by name and options: the routes of one group share one. */
  const shared = new Map();
  const global = settings.global === undefined ? true : settings.global === true;
  const globalLimit = global ? new RouteLimit(settings, settings.name ?? 'ip', keyReader, ran) : null;

  // A limit made by `fastify.rateLimit(options)` or `createRateLimit(options)` without a
  // `name` is named `ip-1`, `ip-2`... in the order made (the same in every process running
  // the same app), so that on Redis it does not share the global limit's counter.
  let made = 0;
  const nameOf = (options) => options.name ?? `${settings.name ?? 'ip'}-${++made}`;

  if (!fastify.hasDecorator('rateLimit')) {
    /** A hook for a route or handler of its own (`onRequest: fastify.rateLimit({ max: 5 })`). */
    fastify.decorate('rateLimit', (options) => {
      if (options === undefined) return (globalLimit ?? new RouteLimit(settings, settings.name ?? 'ip', keyReader, ran)).hook;
      o_.check(options, 'fastify.rateLimit(options)');
      return new RouteLimit({ ...settings, ...options }, nameOf(options), keyReader, ran).hook;
    });
  }

  if (!fastify.hasDecorator('createRateLimit')) {
    /** A check to call yourself: `await check(request)` (or `{ increment: false }` to read the
     * state without consuming), answering as @fastify/rate-limit's `createRateLimit`. */
    fastify.decorate('createRateLimit', (options) => {
      if (options !== undefined) o_.check(options, 'fastify.createRateLimit(options)');
      const limit = options === undefined && globalLimit !== null ? globalLimit : new RouteLimit({ ...settings, ...options }, nameOf(options ?? {}), keyReader, ran);
      return (request, callOptions) => limit.state(request, callOptions?.increment !== false);
    });
  }

  fastify.addHook('onRoute', (route) => {
    const config = route.config?.rateLimit;
    let limit;
    if (config != null) {
      if (config === false) return;
      if (typeof config !== 'object') throw new Error('Unknown value for route rate-limit configuration');
      o_.check(config, `route ${route.method} ${route.url}: config.rateLimit`);
      if (config.groupId !== undefined && typeof config.groupId !== 'string') throw new Error('groupId must be a string');
      const name = config.name ?? (config.groupId !== undefined ? `group:${config.groupId}` : routeName(route));
      const key = `${name}\u0000${JSON.stringify(config, (k, v) => (typeof v === 'function' ? String(v) : v))}`;
      limit = shared.get(key);
      if (limit === undefined) {
        limit = new RouteLimit({ ...settings, ...config }, name, keyReader, ran);
        shared.set(key, limit);
      }
    } else if (globalLimit !== null) {
      limit = globalLimit;
    } else {
      return;
    }
    const existing = route[limit.hookName];
    if (Array.isArray(existing)) existing.push(limit.hook);
    else if (typeof existing === 'function') route[limit.hookName] = [existing, limit.hook];
    else route[limit.hookName] = [limit.hook];
  });
}

/** A route's limit name on Redis: its method and path, as `rateLimit` names a route's limit. */
function routeName(route) {
  const method = Array.isArray(route.method) ? route.method.join(',') : route.method;
  return `${method} ${route.url}`;
}

/** One limit (the global one, a route's, a group's), with its fastify hook. */
class RouteLimit {
  constructor(options, name, keyReader, ran) {
    this.options = options;
    this.name = name;
    this.hookName = o_.hookOf(options.hook);
    this.max = o_.maxOf(options.max);
    this.timeWindow = o_.timeWindowOf(options.timeWindow);
    this.ban = o_.banOf(options.ban);
    this.addHeaders = o_.toggles(options.addHeaders, 'addHeaders');
    this.addHeadersOnExceeding = o_.toggles(options.addHeadersOnExceeding, 'addHeadersOnExceeding');
    this.renames = o_.renames(options);
    this.keyReader = keyReader;
    this.maxTiers = options.maxTiers ?? 16;
    /** The `rateLimit` middleware of each (max, timeWindow) met, and its ban counter. */
    this.tiers = new Map();
    // Checks the options now, as a fixed limit would, with a function's first answer unknown.
    this.tier(typeof this.max === 'number' ? this.max : 1, typeof this.timeWindow === 'number' ? this.timeWindow : 60_000);
    const limit = this;
    this.hook = async function sluicegateRateLimit(request, reply) {
      if (request[ran]) return undefined;
      request[ran] = true;
      return limit.run(request, reply);
    };
  }

  /** The middleware (and ban counter) of `max` requests per `timeWindow` ms. */
  tier(max, timeWindow) {
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 0) {
      throw withCode(new TypeError(`@fastify/rate-limit's \`max\` returned ${String(max)}: it must be a whole number of requests`), 'ERR_SLUICEGATE_INVALID_LIMIT');
    }
    const id = `${max}/${timeWindow}`;
    let tier = this.tiers.get(id);
    if (tier === undefined) {
      if (this.tiers.size >= this.maxTiers) {
        throw withCode(new TypeError(`\`max\` or \`timeWindow\` returned a ${this.maxTiers + 1}th distinct limit (${id}); at most \`maxTiers\` (${this.maxTiers}) are kept, each with its own tables`), 'ERR_SLUICEGATE_TOO_MANY_TIERS');
      }
      tier = {
        middleware: rateLimit(o_.middlewareOptions(this.options, this.name, max, timeWindow, refuse)),
        // The refusals each client had in its window, counted by the engine: past `ban`, a 403.
        bans: this.ban > 0 ? new KeyedLimiter({ quota: `${this.ban}/${timeWindow}ms anchored`, algorithm: 'fixed-window', clock: this.options.clock }) : null,
        max,
        timeWindow,
      };
      this.tiers.set(id, tier);
    }
    return tier;
  }

  /** The key of `request`: the user's `keyGenerator`, or the library's client address. */
  async keyOf(request) {
    const generator = this.options.keyGenerator;
    // As the generator returns it (a number stays a number for allowList and the callbacks).
    let key = typeof generator === 'function' ? await generator(request) : this.keyReader.requestKey(request.raw);
    const groupId = request.routeOptions?.config?.rateLimit?.groupId;
    if (groupId && key !== undefined && key !== null) key += groupId;
    return key;
  }

  async allowed(request, key) {
    const list = this.options.allowList;
    if (!list) return false;
    if (typeof list === 'function') return Boolean(await list(request, key));
    return Array.isArray(list) && list.includes(key);
  }

  /** The key, then the tier that decides `request` (max and timeWindow resolved), or null
   * when the allow list lets it through. */
  async #resolve(request) {
    const key = await this.keyOf(request);
    if (await this.allowed(request, key)) return { key, tier: null };
    const max = typeof this.max === 'function' ? await this.max(request, key) : this.max;
    const timeWindow = typeof this.timeWindow === 'function' ? o_.timeWindowOf(await this.timeWindow(request, key)) : this.timeWindow;
    return { key, tier: this.tier(o_.maxOf(max), timeWindow) };
  }

  /** `createRateLimit`'s answer: decided (consuming when allowed), or read by the engine's
   * peek when `increment` is false. */
  async state(request, increment) {
    const { key, tier } = await this.#resolve(request);
    if (tier === null) return { isAllowed: true, key };
    const answer = (remaining, resetTime, isExceeded, isBanned) => {
      const ttl = resetTime === undefined ? 0 : Math.max(0, resetTime.getTime() - this.now());
      return { isAllowed: false, key, max: tier.max, timeWindow: tier.timeWindow, remaining, ttl, ttlInSeconds: Math.ceil(ttl / 1000), isExceeded, isBanned };
    };
    if (!increment) {
      const held = await tier.middleware.getKey(String(key));
      return held === undefined ? answer(tier.max, undefined, false, false) : answer(Math.max(0, tier.max - held.totalHits), held.resetTime, false, false);
    }
    const { status, info } = await decide(tier.middleware, this.request(request, key));
    const exceeded = status === 429;
    return answer(exceeded ? 0 : info?.remaining ?? tier.max, info?.resetTime, exceeded, exceeded && this.banned(tier, key));
  }

  /** Now on the limits' clock (a DateClock's Date.now(), else the machine's), in ms since the epoch. */
  now() {
    return Date.now();
  }

  /** Whether a refusal of `key` is past `ban` refusals in its window (the engine counts them). */
  banned(tier, key) {
    return this.ban === 0 || (tier.bans !== null && !tier.bans.check(String(key ?? '')).allowed);
  }

  /** The request as the library reads it: the raw request fastify wraps, and its key. */
  request(request, key) {
    const raw = request.raw;
    return { method: raw.method, url: raw.url, rawHeaders: raw.rawHeaders, socket: raw.socket, key: key === undefined || key === null ? null : String(key) };
  }

  async run(request, reply) {
    const o = this.options;
    const { key, tier } = await this.#resolve(request);
    if (tier === null) return undefined;
    const { status, headers, body, info } = await decide(tier.middleware, this.request(request, key));
    if (status === 0) {
      put(reply, headers, this.renames, this.addHeadersOnExceeding, false);
      if (typeof o.onExceeding === 'function') o.onExceeding(request, key);
      return undefined;
    }
    if (status !== 429) {
      // A request with no key (400), or one Redis or a full table could not decide (503).
      put(reply, headers, this.renames, {}, true);
      reply.code(status).type('text/plain; charset=utf-8').send(body);
      return reply;
    }
    if (typeof o.onExceeded === 'function') o.onExceeded(request, key);
    put(reply, headers, this.renames, this.addHeaders, true);
    const retry = Number(headers.find(([name]) => name === 'retry-after')?.[1] ?? Math.ceil(Math.max(0, (info?.resetTime ?? Date.now()) - Date.now()) / 1000));
    const context = { statusCode: 429, ban: false, max: tier.max, ttl: retry * 1000, after: o_.inWords(retry * 1000) };
    if (this.banned(tier, key)) {
      context.statusCode = 403;
      context.ban = true;
      if (typeof o.onBanReach === 'function') o.onBanReach(request, key);
    }
    const build = typeof o.errorResponseBuilder === 'function' ? o.errorResponseBuilder : defaultError;
    throw build(request, context);
  }
}

/** @fastify/rate-limit's default refusal: an error fastify answers as JSON. */
function defaultError(_request, context) {
  const error = new Error(`Rate limit exceeded, retry in ${context.after}`);
  error.statusCode = context.statusCode;
  return error;
}

/** Puts the library's headers on `reply` under the names `renames` gives, but those
 * `toggles` turn off (by the name sent); a refusal's replace any an earlier limit set. */
function put(reply, headers, renames, toggles, refusing) {
  if (refusing) for (const name of RATE_LIMIT_HEADERS) reply.removeHeader(name);
  for (const [written, value] of headers) {
    const name = renames[written] ?? written;
    if (toggles[name] === false) continue;
    reply.header(name, value);
  }
}

sluicegateFastify[SKIP_OVERRIDE] = true;
sluicegateFastify[DISPLAY_NAME] = 'sluicegate';
sluicegateFastify[META] = { fastify: '>=4', name: 'sluicegate' };

module.exports = sluicegateFastify;
module.exports.default = sluicegateFastify;
module.exports.fastifyRateLimit = sluicegateFastify;
module.exports.sluicegateFastify = sluicegateFastify;
