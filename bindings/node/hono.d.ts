// Types for `sluicegate/hono`: hono middleware taking hono-rate-limiter's options.
import type { ClientRateLimitInfo, RateLimitInfo, RateLimitOptions } from './index';

// hono's own types are not imported: they need a newer TypeScript than many projects run
// (hono 4.7+ writes `Uint8Array<...>`, TypeScript 5.7+); the middleware's shape is hono's.
/** hono's Context. */
type Context = any;
/** hono's `next`. */
type Next = () => Promise<void>;
/** hono's MiddlewareHandler. */
type MiddlewareHandler = (c: Context, next: Next) => Promise<Response | void>;

export interface SluicegateHonoOptions extends Omit<RateLimitOptions, 'key' | 'keyGenerator' | 'handler' | 'message' | 'skip' | 'limit' | 'max' | 'skipFailedRequests' | 'skipSuccessfulRequests' | 'requestWasSuccessful'> {
  /** Requests per `windowMs`; default 5 (hono-rate-limiter's). */
  limit?: number;
  /** The request's key; default the library's client address (the peer, through `trustedProxies` only). */
  keyGenerator?: (c: Context) => string | number | Promise<string | number>;
  /** A 429's body instead of the library's sentence: text, an object (JSON), or a function of the context. */
  message?: string | object | ((c: Context) => string | object | Promise<string | object>);
  /** Answers a 429 (the rate-limit headers are already set). */
  handler?: (c: Context, next: Next, options: SluicegateHonoOptions & { statusCode: number; message: unknown }) => Response | Promise<Response>;
  /** Requests for which it is true pass uncounted. */
  skip?: (c: Context) => boolean | Promise<boolean>;
  /** The peer's address off @hono/node-server: your runtime's `getConnInfo` helper. */
  getConnInfo?: (c: Context) => { remote: { address?: string; port?: number } };
}

export interface SluicegateHonoMiddleware extends MiddlewareHandler {
  resetKey(key: string): Promise<boolean>;
  getKey(key: string, limitName?: string): Promise<ClientRateLimitInfo | undefined>;
}

/** `c.get('rateLimit')` (or `requestPropertyName`) is the request's RateLimitInfo. */
export type { RateLimitInfo };

export declare function rateLimiter(options?: SluicegateHonoOptions): SluicegateHonoMiddleware;
export default rateLimiter;
