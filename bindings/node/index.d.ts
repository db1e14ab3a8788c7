// Types for sluicegate, the Rust rate-limiter engine in process for Node.js.

/** The six algorithms, by their names in Rust and in the configuration of every front end. */
export type Algorithm = 'gcra' | 'token-bucket' | 'leaky-bucket' | 'fixed-window' | 'sliding-window' | 'sliding-log';

/** The answer to "may this request go ahead?". Times are milliseconds. */
export interface Decision {
  allowed: boolean;
  /** The quota's limit. */
  limit: number;
  /** How many more single requests would be allowed right now. */
  remaining: number;
  /** Denied: ms until this request would be admitted; allowed: null. */
  retryAfter: number | null;
  /** Ms until the state is fully replenished / the window resets. */
  resetAfter: number;
  /** The leaky bucket's shaping delay for an admitted request, in ms; 0 otherwise. */
  wait: number;
}

export interface LimiterOptions {
  /** A quota string as Rust parses it: '100/minute burst 20', '5/30s', '1000 per second'. */
  quota: string;
  /** Default 'gcra', as in Rust. */
  algorithm?: Algorithm;
  /** Time from a ManualClock instead of the real clock (tests). */
  clock?: ManualClock;
}

export interface KeyedLimiterOptions extends LimiterOptions {
  /** The most keys held at once; a new key beyond them is denied while the table is full of live keys. */
  maxKeys?: number;
}

/** One limit for everything. Each call is one synchronous native call. */
export class Limiter {
  constructor(options: LimiterOptions);
  readonly quota: string;
  readonly algorithm: Algorithm;
  /** Consumes `cost` (default 1) when allowed. Throws a RangeError for a cost that can never fit. */
  check(cost?: number): Decision;
  /** The same answer, consuming nothing. */
  peek(cost?: number): Decision;
  /** Records `cost` (default 1) whatever the answer. */
  hit(cost?: number): Decision;
  /** The largest cost one check can be allowed. */
  readonly maxCost: number;
}

/** A limit per string key. Each call is one synchronous native call. */
export class KeyedLimiter {
  constructor(options: KeyedLimiterOptions);
  readonly quota: string;
  readonly algorithm: Algorithm;
  check(key: string, cost?: number): Decision;
  peek(key: string, cost?: number): Decision;
  hit(key: string, cost?: number): Decision;
  /** Keys currently held. */
  readonly size: number;
  readonly maxCost: number;
}

/** Time moved by hand, for tests; limiters built on one clock share its time. */
export class ManualClock {
  /** Starts at `ms` (default 0, which window algorithms take as the UNIX epoch). */
  constructor(ms?: number);
  /** Moves forward by `ms` (fractions allowed, rounded to the nanosecond). */
  advance(ms: number): void;
  /** Sets the time (it may go backwards). */
  set(ms: number): void;
  readonly now: number;
}

export interface RedisLimiterOptions extends LimiterOptions {
  /** Default 'redis://127.0.0.1:6379/'; for a Cluster, seed nodes separated by commas. */
  url?: string;
  /** Key namespace, default 'sluicegate:'. The same quota, algorithm, key and prefix are one limit for every process. */
  prefix?: string;
  /** Talk to a Redis Cluster. Default false. */
  cluster?: boolean;
  /** Per call, in ms; default 100. */
  timeout?: number;
  /** Per connection attempt, in ms; default 1000. */
  connectTimeout?: number;
}

/** One limit shared through Redis; every call returns a Promise that rejects with an Error when Redis cannot answer. */
export class RedisLimiter {
  private constructor();
  static connect(options: RedisLimiterOptions): Promise<RedisLimiter>;
  readonly quota: string;
  readonly algorithm: Algorithm;
  readonly prefix: string;
  check(key: string, cost?: number): Promise<Decision>;
  peek(key: string, cost?: number): Promise<Decision>;
  hit(key: string, cost?: number): Promise<Decision>;
  readonly maxCost: number;
  /** False while the limiter considers Redis down. */
  readonly available: boolean;
  close(): Promise<void>;
}

/** A request config as axios hands it to interceptors (kept structural: axios is not a dependency). */
export interface ThrottledRequestConfig {
  url?: string;
  baseURL?: string;
  headers?: unknown;
  signal?: unknown;
  [name: string]: unknown;
}

export interface ThrottleLimit {
  quota: string;
  algorithm?: Algorithm;
  /** The request's key on this limit (per host, per user...); one key for every request when omitted. */
  key?: (config: ThrottledRequestConfig) => string;
  /** Names the limit's Redis prefix (`<prefix><name>:`); default its index. */
  name?: string;
}

export interface ThrottleOptions {
  quota?: string;
  algorithm?: Algorithm;
  key?: (config: ThrottledRequestConfig) => string;
  /** Several limits, decided all-or-nothing; instead of quota/algorithm/key. */
  limits?: ThrottleLimit[];
  /** A Redis URL: the limits live there, shared by every process. */
  redis?: string;
  /** Redis key prefix, default 'sluicegate:axios:'. */
  prefix?: string;
  /** Default true: a 429 with Retry-After pauses that key, and the request is sent again when the pause ends. */
  respectRetryAfter?: boolean;
  /** How often one request is sent again after a 429; default 3. */
  maxRetries?: number;
  timeout?: number;
  connectTimeout?: number;
}

/** Makes requests of `instance` wait for their slot; returns the same instance. */
export function throttle<T extends { interceptors: { request: { use: Function }; response: { use: Function } } }>(
  instance: T,
  options: ThrottleOptions,
): T & { sluicegate: { queued(): number } };

declare const sluicegate: {
  Limiter: typeof Limiter;
  KeyedLimiter: typeof KeyedLimiter;
  RedisLimiter: typeof RedisLimiter;
  ManualClock: typeof ManualClock;
  throttle: typeof throttle;
};
export default sluicegate;
