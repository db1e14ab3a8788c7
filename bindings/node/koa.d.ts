// Types for `sluicegate/koa`: koa middleware taking koa-ratelimit's options.
import type { Algorithm, ManualClock, RateLimitInfo, RedisConnection } from './index';

/** koa's context, as far as the middleware reads it. */
type KoaContext = any;

export interface SluicegateKoaOptions {
  /** Ms per window; default 3600000 (an hour), windows from each client's first request. */
  duration?: number;
  /** Requests per window; default 2500; 0 refuses every request. */
  max?: number;
  /** The request's key; default the library's client address (the socket's peer, through `trustedProxies` only; koa's `ctx.ip` is not read). false: not limited. */
  id?: (ctx: KoaContext) => string | number | false | Promise<string | number | false>;
  /** Other names for the X-RateLimit-* trio. */
  headers?: { total?: string; remaining?: string; reset?: string };
  /** No rate-limit headers (Retry-After still on a refusal). */
  disableHeader?: boolean;
  /** true: not limited. */
  whitelist?: (ctx: KoaContext) => boolean | Promise<boolean>;
  /** true: refused with 403. */
  blacklist?: (ctx: KoaContext) => boolean | Promise<boolean>;
  /** A 429's body instead of the library's sentence. */
  errorMessage?: string | object;
  /** Refuse with `ctx.throw(429, message, { headers })` instead of answering. */
  throw?: boolean;
  /** Called for each request refused with 429. */
  onLimited?: (ctx: KoaContext) => void;
  name?: string;
  quota?: string;
  algorithm?: Algorithm;
  trustedProxies?: string[];
  forwardedHeaders?: 'x-forwarded-for' | 'forwarded' | 'both';
  ipv6Prefix?: number;
  redis?: string | RedisConnection;
  redisCluster?: string | RedisConnection;
  onBackendError?: 'allow' | 'deny' | 'local';
  /** RateLimit-Policy and RateLimit too (off by default, as koa-ratelimit sends the trio). */
  standardHeaders?: boolean | 'draft-6' | 'draft-7' | 'draft-8' | 'draft-10';
  legacyHeaders?: boolean;
  maxKeys?: number;
  clock?: ManualClock;
  logger?: { warn(...args: unknown[]): void; error(...args: unknown[]): void };
  validate?: boolean | Record<string, boolean>;
}

export interface SluicegateKoaMiddleware {
  (ctx: KoaContext, next: () => Promise<unknown>): Promise<unknown>;
  /** Forgets `key`: a Promise of whether the limit held it. */
  resetKey(key: string): Promise<boolean>;
}

/** `ctx.state.rateLimit` is set to the request's RateLimitInfo. */
export type { RateLimitInfo };

declare function ratelimit(options?: SluicegateKoaOptions): SluicegateKoaMiddleware;
export default ratelimit;
export { ratelimit };
