// Types for `sluicegate/fastify`: a fastify plugin taking @fastify/rate-limit's options.
import type { FastifyPluginAsync, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Algorithm, ManualClock, RedisConnection } from './index';

/** What `errorResponseBuilder` is given, as @fastify/rate-limit gives it. */
export interface RateLimitErrorContext {
  /** 429, or 403 once `ban` refusals have been answered in the window. */
  statusCode: number;
  ban: boolean;
  max: number;
  /** Ms until the request would be admitted (the library's Retry-After, in ms). */
  ttl: number;
  /** The same in words: '1 second', '2 minutes'. */
  after: string;
}

/** A route's `config.rateLimit`, or `fastify.rateLimit(options)`'s: the plugin's options, per route. */
export interface RateLimitOptions {
  /** Requests per `timeWindow`; default 1000; a function `(request, key)` (a limit per distinct answer, at most `maxTiers`). */
  max?: number | ((request: FastifyRequest, key: string) => number | Promise<number>);
  /** Ms, or text such as '1 minute'; default 60000; a function `(request, key)`. Windows start at each client's first request. */
  timeWindow?: number | string | ((request: FastifyRequest, key: string) => number | Promise<number>);
  /** Where the limit runs: 'onRequest' (default), 'preParsing', 'preValidation' or 'preHandler'. */
  hook?: 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler';
  /** Keys never limited, or a function `(request, key)` saying so. */
  allowList?: string[] | ((request: FastifyRequest, key: string) => boolean | Promise<boolean>);
  /** The request's key; default the library's client address (the socket's peer, through `trustedProxies` only). */
  keyGenerator?: (request: FastifyRequest) => string | number | Promise<string | number>;
  /** What a refusal throws (fastify answers it); default an Error 'Rate limit exceeded, retry in 1 minute' with its statusCode. */
  errorResponseBuilder?: (request: FastifyRequest, context: RateLimitErrorContext) => unknown;
  /** Called for each request let through. */
  onExceeding?: (request: FastifyRequest, key: string) => void;
  /** Called for each request refused. */
  onExceeded?: (request: FastifyRequest, key: string) => void;
  /** Called when a refusal becomes a 403 (`ban`). */
  onBanReach?: (request: FastifyRequest, key: string) => void;
  /** After this many 429s in a window, a client gets 403s. */
  ban?: number;
  /** Headers to leave out of a refusal, by lower-case name: { 'x-ratelimit-reset': false }. */
  addHeaders?: Record<string, boolean>;
  /** Headers to leave out of a response let through. */
  addHeadersOnExceeding?: Record<string, boolean>;
  /** Draft-6's RateLimit-Limit, -Remaining, -Reset (and RateLimit-Policy) instead of X-RateLimit-*. */
  enableDraftSpec?: boolean;
  /** Routes with the same groupId share one limit. */
  groupId?: string;
  /** Names the limit in the headers and on Redis; default 'ip' for the global limit, the route (`GET /items`) for a route's, `ip-1`, `ip-2`... in the order made for `fastify.rateLimit(options)` and `createRateLimit(options)`. */
  name?: string;
  /** A quota string and algorithm of the engine instead of `max` + `timeWindow`. */
  quota?: string;
  algorithm?: Algorithm;
}

/** The plugin's options: @fastify/rate-limit's, and sluicegate's own. */
export interface SluicegateFastifyOptions extends RateLimitOptions {
  /** false: only routes with `config.rateLimit` are limited. Default true. */
  global?: boolean;
  /** @fastify/rate-limit's: true lets requests through when Redis cannot answer (`onBackendError: 'allow'`, the default), false refuses them with 503. */
  skipOnError?: boolean;
  /** Group IPv6 clients by this prefix; default 64. */
  ipv6Subnet?: number;
  ipv6Prefix?: number;
  /** Networks whose X-Forwarded-For / Forwarded are believed (fastify's `trustProxy` is not read). */
  trustedProxies?: string[];
  forwardedHeaders?: 'x-forwarded-for' | 'forwarded' | 'both';
  /** A Redis URL (or `{ url, caCert, ... }`): the limits are shared by every process, and with the express middleware, Rust and Python naming them alike. */
  redis?: string | RedisConnection;
  redisCluster?: string | RedisConnection;
  onBackendError?: 'allow' | 'deny' | 'local';
  /** sluicegate's header forms, instead of those `enableDraftSpec` picks. */
  standardHeaders?: boolean | 'draft-6' | 'draft-7' | 'draft-8' | 'draft-10';
  legacyHeaders?: boolean;
  maxKeys?: number;
  maxTiers?: number;
  clock?: ManualClock;
  logger?: { warn(...args: unknown[]): void; error(...args: unknown[]): void };
  validate?: boolean | Record<string, boolean>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** A hook of its own: `onRequest: fastify.rateLimit({ max: 5 })`. */
    rateLimit(options?: RateLimitOptions): onRequestHookHandler;
  }
  interface FastifyContextConfig {
    rateLimit?: RateLimitOptions | false;
  }
}

declare const sluicegateFastify: FastifyPluginAsync<SluicegateFastifyOptions>;
export default sluicegateFastify;
export { sluicegateFastify, sluicegateFastify as fastifyRateLimit };
