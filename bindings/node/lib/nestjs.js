'use strict';
// `sluicegate/nestjs`: @nestjs/throttler's module, guard and decorators
// (`ThrottlerModule.forRoot([{ name, ttl, limit }])`, `ThrottlerGuard`, `@Throttle`,
// `@SkipThrottle`, a `getTracker` override), deciding each request by the library's one HTTP
// decision through `rateLimit` (lib/adapter_decide.js): every throttler of a route is one of
// its limits, decided all-or-nothing, its key the tracker; the client address (the default
// tracker) and the headers are the library's. @nestjs/common and @nestjs/core are the app's.

const path = require('node:path');

/**
 * `name` as the app resolves it: NestJS's tokens (`Reflector`) and exceptions must be the
 * app's own copies. From a checkout linked with `npm install <checkout>/bindings/node`, a plain
 * `require` here would find this package's devDependencies instead.
 */
function appRequire(name) {
  for (const from of [require.main?.filename && path.dirname(require.main.filename), process.cwd()]) {
    if (!from) continue;
    try {
      return require(require.resolve(name, { paths: [from] }));
    } catch {
      // not resolvable from there: try the next place
    }
  }
  return require(name);
}

const { Global, HttpException, Inject, Injectable, Module } = appRequire('@nestjs/common');
const { Reflector } = appRequire('@nestjs/core');
const { rateLimit } = require('./ratelimit');
const { decide, refuse } = require('./adapter_decide');
const { RATE_LIMIT_HEADERS } = require('./verdict');
const { describe, knownOptions } = require('./args');

// @nestjs/throttler's metadata keys and token: its decorators and ours are interchangeable.
const THROTTLER_LIMIT = 'THROTTLER:LIMIT';
const THROTTLER_TTL = 'THROTTLER:TTL';
const THROTTLER_TRACKER = 'THROTTLER:TRACKER';
const THROTTLER_BLOCK_DURATION = 'THROTTLER:BLOCK_DURATION';
const THROTTLER_KEY_GENERATOR = 'THROTTLER:KEY_GENERATOR';
const THROTTLER_OPTIONS = 'THROTTLER:MODULE_OPTIONS';
const THROTTLER_SKIP = 'THROTTLER:SKIP';

const WHAT = 'ThrottlerModule.forRoot(options)';
const throttlerMessage = 'ThrottlerException: Too Many Requests';

/** The module options' names: @nestjs/throttler's and sluicegate's own (as `rateLimit` reads them). */
const COMMON = ['throttlers', 'skipIf', 'ignoreUserAgents', 'getTracker', 'generateKey', 'errorMessage', 'setHeaders'];
const OWN = ['trustedProxies', 'forwardedHeaders', 'ipv6Prefix', 'redis', 'redisCluster', 'onBackendError', 'standardHeaders', 'legacyHeaders', 'maxKeys', 'clock', 'logger', 'validate', 'algorithm'];
const THROTTLER = ['name', 'ttl', 'limit', 'skipIf', 'ignoreUserAgents', 'getTracker', 'generateKey', 'setHeaders'];

/** @nestjs/throttler's options with no counterpart here. */
const UNSUPPORTED = {
  storage: "the store is sluicegate's engine: give `redis: 'redis://host:6379/'` to share limits through Redis",
  blockDuration: 'a refused request consumes nothing in the engine: a client is refused until its window lets it in',
};

/** A 429, as @nestjs/throttler's. */
class ThrottlerException extends HttpException {
  constructor(message) {
    super(`${message || throttlerMessage}`, 429);
  }
}

/** The module options, checked: `{ throttlers, common, own }`. */
function moduleOptions(options) {
  const list = Array.isArray(options) ? options : options?.throttlers;
  if (!Array.isArray(list)) throw new TypeError(`${WHAT} takes [{ ttl, limit }] or { throttlers: [...] }, got ${describe(options)}`);
  const common = Array.isArray(options) ? {} : options;
  for (const name of Object.keys(common)) {
    if (name in UNSUPPORTED) throw new TypeError(`${WHAT}: \`${name}\` (@nestjs/throttler) has no counterpart here: ${UNSUPPORTED[name]}`);
  }
  knownOptions(common, [...COMMON, ...OWN], WHAT);
  const throttlers = list.map((t, i) => {
    if (t === null || typeof t !== 'object') throw new TypeError(`${WHAT}: throttlers[${i}] must be { ttl, limit }, got ${describe(t)}`);
    if ('blockDuration' in t) throw new TypeError(`${WHAT}: throttlers[${i}]: \`blockDuration\` has no counterpart here: ${UNSUPPORTED.blockDuration}`);
    knownOptions(t, THROTTLER, `${WHAT}: throttlers[${i}]`);
    return { ...t, name: t.name ?? 'default' };
  });
  const own = {};
  for (const k of OWN) if (common[k] !== undefined) own[k] = common[k];
  return { throttlers, common, own };
}

/** @nestjs/throttler's `@Throttle({ name: { limit, ttl } })`, on a handler or a controller. */
function Throttle(options) {
  return (target, _key, descriptor) => {
    const at = descriptor ? descriptor.value : target;
    for (const name in options) {
      if (options[name].blockDuration !== undefined) throw new TypeError(`@Throttle: \`blockDuration\` has no counterpart here: ${UNSUPPORTED.blockDuration}`);
      Reflect.defineMetadata(THROTTLER_TTL + name, options[name].ttl, at);
      Reflect.defineMetadata(THROTTLER_LIMIT + name, options[name].limit, at);
      Reflect.defineMetadata(THROTTLER_TRACKER + name, options[name].getTracker, at);
      Reflect.defineMetadata(THROTTLER_KEY_GENERATOR + name, options[name].generateKey, at);
    }
    return descriptor ?? target;
  };
}

/** @nestjs/throttler's `@SkipThrottle()` (every throttler named `default`), or `@SkipThrottle({ short: true })`. */
function SkipThrottle(skip = { default: true }) {
  return (target, _key, descriptor) => {
    const at = descriptor?.value ?? target;
    for (const name in skip) Reflect.defineMetadata(THROTTLER_SKIP + name, skip[name], at);
    return descriptor ?? target;
  };
}

/** `ThrottlerModule.forRoot(options)` / `forRootAsync({ useFactory, inject, imports })`. */
class ThrottlerModule {
  static forRoot(options = []) {
    moduleOptions(options);
    const providers = [{ provide: THROTTLER_OPTIONS, useValue: options }];
    return { module: ThrottlerModule, providers, exports: providers };
  }

  static forRootAsync(options) {
    if (typeof options?.useFactory !== 'function') throw new TypeError('ThrottlerModule.forRootAsync(options): give `useFactory` (and `inject`)');
    const providers = [{ provide: THROTTLER_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] }];
    return { module: ThrottlerModule, imports: options.imports ?? [], providers, exports: providers };
  }
}
Global()(ThrottlerModule);
Module({})(ThrottlerModule);

/** The guard: `{ provide: APP_GUARD, useClass: ThrottlerGuard }`, or `@UseGuards(ThrottlerGuard)`. */
class ThrottlerGuard {
  #checked;
  /** The `rateLimit` middleware of each route and set of limits met. */
  #routes = new Map();
  #keyReader;

  constructor(options, reflector) {
    this.options = options;
    this.reflector = reflector;
  }

  /** The options, checked once (`forRootAsync`'s arrive when the app starts). */
  #settings() {
    if (this.#checked === undefined) {
      const checked = moduleOptions(this.options);
      // Shorter windows first, as @nestjs/throttler orders them.
      checked.throttlers.sort((a, b) => (typeof a.ttl === 'function' || typeof b.ttl === 'function' ? 0 : a.ttl - b.ttl));
      const { trustedProxies, forwardedHeaders, ipv6Prefix } = checked.own;
      this.#keyReader = rateLimit({ quota: '1/second', trustedProxies, forwardedHeaders, ipv6Prefix, validate: false });
      this.#checked = checked;
    }
    return this.#checked;
  }

  async canActivate(context) {
    const { throttlers, common, own } = this.#settings();
    if (await this.shouldSkip(context)) return true;
    const handler = context.getHandler();
    const classRef = context.getClass();
    const { req, res } = this.getRequestResponse(context);
    const limits = [];
    const keys = [];
    for (const throttler of throttlers) {
      const meta = (key) => this.reflector.getAllAndOverride(key + throttler.name, [handler, classRef]);
      const skipIf = throttler.skipIf ?? common.skipIf;
      if (meta(THROTTLER_SKIP) || skipIf?.(context)) continue;
      const ignore = throttler.ignoreUserAgents ?? common.ignoreUserAgents;
      if (Array.isArray(ignore) && ignore.some((pattern) => pattern.test(req.headers?.['user-agent']))) continue;
      const limit = await resolve(context, meta(THROTTLER_LIMIT) || throttler.limit);
      const ttl = await resolve(context, meta(THROTTLER_TTL) || throttler.ttl);
      const getTracker = meta(THROTTLER_TRACKER) || throttler.getTracker || common.getTracker || ((r, c) => this.getTracker(r, c));
      const generateKey = meta(THROTTLER_KEY_GENERATOR) || throttler.generateKey || common.generateKey;
      const tracker = await getTracker(req, context);
      keys.push(generateKey ? generateKey(context, tracker, throttler.name) : tracker);
      limits.push({ name: throttler.name, limit, ttl });
    }
    if (limits.length === 0) return true;
    const raw = req.raw ?? req;
    const route = `${classRef.name}.${handler.name}`;
    const middleware = this.#route(route, limits, own);
    const request = { method: raw.method, url: raw.originalUrl ?? raw.url, rawHeaders: raw.rawHeaders, socket: raw.socket, keys: keys.map((k) => (k == null ? null : String(k))) };
    const { status, headers, body } = await decide(middleware, request);
    const setHeaders = common.setHeaders ?? true;
    if (setHeaders) {
      if (status !== 0) for (const name of RATE_LIMIT_HEADERS) removeHeader(res, name);
      for (const [name, value] of headers) header(res, name, value);
    }
    if (status === 0) return true;
    if (status !== 429) throw new HttpException(body.replace(/\n$/, ''), status);
    const message = typeof common.errorMessage === 'function' ? await common.errorMessage(context, { limits, keys }) : common.errorMessage;
    throw new ThrottlerException(message);
  }

  /** The route's middleware for these limits: one `rateLimit` with a limit per throttler, keyed
   * by the trackers; on Redis each limit is named after its route too (`default:Cats.find`),
   * as @nestjs/throttler keys a route's counters apart. */
  #route(route, limits, own) {
    const id = `${route}\u0000${limits.map((l) => `${l.name}:${l.limit}/${l.ttl}`).join(',')}`;
    let middleware = this.#routes.get(id);
    if (middleware === undefined) {
      if (this.#routes.size >= 4096) throw new TypeError('sluicegate/nestjs: more than 4096 distinct routes and limits; a `limit` or `ttl` function must return few distinct values');
      const shared = own.redis !== undefined || own.redisCluster !== undefined;
      middleware = rateLimit({
        ...own,
        limits: limits.map((l, i) => ({
          name: shared ? `${l.name}:${route}` : l.name,
          key: (req) => req.keys[i],
          // `limit` requests per `ttl` ms, in windows from each client's first request.
          quota: `${l.limit}/${l.ttl}ms anchored`,
          algorithm: own.algorithm ?? 'fixed-window',
        })),
        handler: refuse,
      });
      this.#routes.set(id, middleware);
    }
    return middleware;
  }

  /** Override to skip requests (a Promise of true to let through). */
  async shouldSkip(_context) {
    return false;
  }

  /** The tracker (the key) of a request: by default the library's client address (the
   * socket's peer, through `trustedProxies` only), not `req.ip`. Override it, as with
   * @nestjs/throttler. */
  async getTracker(req) {
    this.#settings();
    return this.#keyReader.requestKey(req.raw ?? req);
  }

  getRequestResponse(context) {
    const http = context.switchToHttp();
    return { req: http.getRequest(), res: http.getResponse() };
  }
}
Injectable()(ThrottlerGuard);
Inject(THROTTLER_OPTIONS)(ThrottlerGuard, undefined, 0);
Inject(Reflector)(ThrottlerGuard, undefined, 1);

/** Sets a header on express's response or fastify's reply. */
function header(res, name, value) {
  if (typeof res.header === 'function') res.header(name, value);
  else res.setHeader(name, value);
}

function removeHeader(res, name) {
  if (typeof res.removeHeader === 'function') res.removeHeader(name);
}

async function resolve(context, value) {
  return typeof value === 'function' ? value(context) : value;
}

module.exports = {
  ThrottlerModule,
  ThrottlerGuard,
  ThrottlerException,
  Throttle,
  SkipThrottle,
  throttlerMessage,
  getOptionsToken: () => THROTTLER_OPTIONS,
  THROTTLER_OPTIONS,
};
