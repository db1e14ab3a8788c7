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
  /** Only on a new key denied because the table is full (`maxKeys`); `retryAfter` is then 1000 (the library's one answer, as Python's 1.0 s). */
  reason?: 'table-full';
}

export interface LimiterOptions {
  /** A quota string as Rust parses it: '100/minute burst 20', '5/30s', '1000 per second'. */
  quota: string;
  /** Default 'gcra', as in Rust. */
  algorithm?: Algorithm;
  /** Time from a ManualClock or a DateClock instead of the engine's clock (tests). */
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
  /** Forgets `key` (the engine's reset): whether it was held. */
  reset(key: string): boolean;
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

/** A test aid: a clock that follows `Date.now()`, so jest's and sinon's fake timers move the limits on it. Not for production. */
export class DateClock extends ManualClock {
  constructor();
  /** Sets the clock to `Date.now()` (every check on it does so first). */
  sync(): void;
}

/** A PEM file's path, the PEM text itself, or its bytes (a Buffer from `fs.readFileSync(...)`, any Uint8Array). */
export type Pem = string | Uint8Array;

/** What reaching Redis may need beside its URL (the service's --redis-ca-cert..., Python's ca_cert...). */
export interface RedisTls {
  /** The CA a `rediss://` server's certificate must chain to, instead of the system's roots. */
  caCert?: Pem;
  /** The client certificate shown for mutual TLS, with `clientKey`. */
  clientCert?: Pem;
  /** The client certificate's private key. */
  clientKey?: Pem;
  /** The user the Sentinels of a `redis-sentinel://` URL know (the URL's own user is the master's). */
  sentinelUsername?: string;
  /** The Sentinels' password. */
  sentinelPassword?: string;
}

/** Where Redis is: `redis://`, `rediss://` (TLS), `redis://user:password@host/` (ACL), `redis-sentinel://h1:26379,h2:26379/#master`, `rediss-sentinel://`; with what reaching it needs. */
export interface RedisConnection extends RedisTls {
  url: string;
}

export interface RedisLimiterOptions extends LimiterOptions, RedisTls {
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
  /** Forgets `key` on Redis: whether it was held. */
  reset(key: string): Promise<boolean>;
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

/** axios-rate-limit's form of a limit: never more than `maxRequests` in any `perMilliseconds` (or `duration`). */
export interface AxiosRateLimitOptions {
  maxRequests?: number;
  perMilliseconds?: number;
  /** `'1s'`, `'500ms'`, `'2m'`, `'1h'`, or ms. */
  duration?: string | number;
  /** `maxRequests: maxRPS, perMilliseconds: 1000`. */
  maxRPS?: number;
}

export interface ThrottleLimit extends AxiosRateLimitOptions {
  /** One of the engine's quotas; or give axios-rate-limit's form instead. */
  quota?: string;
  algorithm?: Algorithm;
  /** The request's key on this limit (per host, per user...); one key for every request when omitted. */
  key?: (config: ThrottledRequestConfig) => string;
  /** Names the limit's Redis prefix (`<prefix><name>:`); default its index. */
  name?: string;
}

export interface ThrottleOptions extends AxiosRateLimitOptions {
  quota?: string;
  algorithm?: Algorithm;
  key?: (config: ThrottledRequestConfig) => string;
  /** Several limits, decided all-or-nothing; instead of quota/algorithm/key. */
  limits?: ThrottleLimit[];
  /** A Redis URL, or `{ url, caCert, ... }`: the limits live there, shared by every process. */
  redis?: string | RedisConnection;
  /** Redis key prefix, default 'sluicegate:axios:'. */
  prefix?: string;
  /** Default true: a 429 with Retry-After pauses that key, and the request is sent again when the pause ends. */
  respectRetryAfter?: boolean;
  /** How often one request is sent again after a 429; default 3. */
  maxRetries?: number;
  timeout?: number;
  connectTimeout?: number;
  cluster?: boolean;
  /** The most requests waiting at once; one more rejects with code ERR_SLUICEGATE_QUEUE_FULL. */
  maxQueue?: number;
  /** The most ms a request waits; past it, it rejects with code ERR_SLUICEGATE_QUEUE_TIMEOUT. */
  maxWait?: number;
  /** axios-rate-limit's: your own queue (push, shift, and length or getLength(); any of them may return a Promise) instead of this package's. */
  queue?: ThrottleQueue;
  /** axios-rate-limit's: a throttle from `throttle.getLimiter(options)` to share (then no other option). */
  rateLimiter?: ThrottleLimiter;
}

/** A queue of your own, as axios-rate-limit takes it: entries are opaque. */
export interface ThrottleQueue {
  push(entry: unknown): unknown;
  shift(): unknown;
  length?: number;
  getLength?(): number | Promise<number>;
}

/** A throttle on its own (`throttle.getLimiter`): its limits and queue, for several axios instances. */
export interface ThrottleLimiter {
  enable<T extends { interceptors: { request: { use: Function }; response: { use: Function } } }>(instance: T): T & Throttled;
  getMaxRPS(): number;
  setMaxRPS(n: number): void;
  setRateLimitOptions(options: ThrottleOptions | null | undefined): void;
  /** As `Throttled.getQueue`. */
  getQueue(): ThrottledRequestConfig[];
  readonly queued: number;
}

/** What `throttle` adds to the instance: axios-rate-limit's methods. */
export interface Throttled {
  /** The first limit's quota, in requests per second. */
  getMaxRPS(): number;
  /** `setRateLimitOptions({ maxRequests: n, perMilliseconds: 1000 })`. */
  setMaxRPS(n: number): void;
  /** New quotas at run time (the engine's quota change; history carries over); null changes nothing. */
  setRateLimitOptions(options: ThrottleOptions | null | undefined): void;
  /** The waiting requests' configs (a copy); your own `queue` object when you gave one. */
  getQueue(): ThrottledRequestConfig[];
  sluicegate: { queued(): number; limiter: ThrottleLimiter };
}

/** Makes requests of `instance` wait for their slot; returns the same instance. No options: no limit (axios-rate-limit's default). */
export declare const throttle: {
  <T extends { interceptors: { request: { use: Function }; response: { use: Function } } }>(instance: T, options?: ThrottleOptions): T & Throttled;
  /** axios-rate-limit's `getLimiter`: a throttle to `enable` on several instances, which then share it. */
  getLimiter(options?: ThrottleOptions): ThrottleLimiter;
};

/** What a response reports of its tightest limit, on `req.rateLimit` (or `requestPropertyName`). */
export interface RateLimitInfo {
  /** The limit reported: the one with the fewest requests left, or on a 429 the one that admits last. */
  name: string;
  /** Its quota's limit (`q` of RateLimit-Policy). */
  limit: number;
  /** `limit - remaining`. */
  used: number;
  /** The same as `used` (express-rate-limit's name). */
  current: number;
  /** Requests left under it (`r` of RateLimit). */
  remaining: number;
  /** When its quota is back: the instant `t` of RateLimit rounds up to seconds (the same for every request of a fixed window, as `getKey` says). */
  resetTime: Date;
  /** The key that limit counted the request under: the client address for 'ip' (an IPv6 client's /64 as the library writes it), a header's value, a key function's string; '' for 'global'. */
  key: string;
}

/** What `getKey` finds of a key, as express-rate-limit's store answers it. */
export interface ClientRateLimitInfo {
  /** The limit's capacity in use for the key, by the engine's peek: its burst (the limit for windows) less the engine's remaining. */
  totalHits: number;
  /** When the key's state is back to full (the engine's reset). */
  resetTime: Date;
}

/** A request's key on a limit: a string, or nothing (the request is then refused with 400). */
export type KeyFunction = (req: any, res: any) => string | number | null | undefined | Promise<string | number | null | undefined>;

export interface HttpLimit {
  /** Names the limit in the headers and on Redis (`sluicegate:http:<name>:`), as every front end does. */
  name: string;
  /** 'ip' (the client address, through trusted proxies only), 'global', 'header:NAME', or a function of the request. Default 'ip'. */
  key?: 'ip' | 'global' | `header:${string}` | KeyFunction;
  quota: string;
  algorithm?: Algorithm;
  /** What one request costs, default 1. */
  cost?: number;
}

export interface RateLimitOptions {
  /** The limits, decided all-or-nothing; or one limit's options at the top level (the shorthand). */
  limits?: HttpLimit[];
  /** Shorthand: one limit, named after its key ('ip' by default); unnamed on Redis, after its route (`POST /login`) at its first request on one. */
  quota?: string;
  algorithm?: Algorithm;
  key?: HttpLimit['key'];
  name?: string;
  cost?: number;
  /** express-rate-limit's form of the shorthand: `limit` requests per `windowMs` ms in fixed windows. */
  windowMs?: number;
  /** A number (0 refuses every request, as in express-rate-limit v7), or a function of the request returning one (or a Promise of one): a middleware per distinct number. */
  limit?: number | ((req: any, res: any) => number | Promise<number>);
  max?: number | ((req: any, res: any) => number | Promise<number>);
  /** With `limit` as a function: the most distinct limits kept; default 16. */
  maxTiers?: number;
  /** express-rate-limit's names for `key` (a function) and `name`. */
  keyGenerator?: KeyFunction;
  identifier?: string;
  /** Networks whose X-Forwarded-For / Forwarded are believed: ['10.0.0.0/8', '::1']; 'unix' trusts a Unix socket's peer (nginx in front). Default none. */
  trustedProxies?: string[];
  /** Which forwarding header the trusted proxies write; default 'x-forwarded-for' (the library's); 'both': they must then agree. */
  forwardedHeaders?: 'x-forwarded-for' | 'forwarded' | 'both';
  /** Group IPv6 clients by this prefix, 0 to 128; default 64. `ipv6Subnet` (express-rate-limit's name) too; false is 128. */
  ipv6Prefix?: number;
  ipv6Subnet?: number | false;
  /** A Redis URL, or `{ url, caCert, clientCert, clientKey, ... }`: the limits are shared by every process (and Rust and Python front ends) naming them alike. */
  redis?: string | RedisConnection;
  /** A Redis Cluster's seed nodes, comma-separated: 'redis://10.0.0.1:7000,redis://10.0.0.2:7000' (or `{ url, caCert, ... }` with them). */
  redisCluster?: string | RedisConnection;
  /** When Redis cannot answer: 'allow' (default) lets requests through; 'deny' answers 503 with Retry-After: 1; 'local' decides them in this process. */
  onBackendError?: 'allow' | 'deny' | 'local';
  /** Where a Redis outage is reported (at most every 10 s, and once when it ends); default console. */
  logger?: { warn(...args: unknown[]): void; error(...args: unknown[]): void };
  /** A ManualClock or a DateClock (a test aid: it follows Date.now(), so fake timers move it) for the in-process limits. */
  clock?: ManualClock;
  /** Omitted: RateLimit-Policy and RateLimit (draft-10) on every response; true: draft-6 (as express-rate-limit); a draft by name; false: none. */
  standardHeaders?: boolean | 'draft-6' | 'draft-7' | 'draft-8' | 'draft-10';
  /** Also X-RateLimit-Limit, -Remaining and -Reset (a Unix timestamp in seconds); default true, as express-rate-limit v7 and later. */
  legacyHeaders?: boolean;
  /** The most keys each in-process limit holds; default 1,000,000 (the library's bound). */
  maxKeys?: number;
  /** Requests for which it is true pass uncounted and without headers. */
  skip?: (req: any, res: any) => boolean | Promise<boolean>;
  /** express-rate-limit's: a request whose response failed (`requestWasSuccessful` false, or the client left before it ended) is given back after it; default false. */
  skipFailedRequests?: boolean;
  /** express-rate-limit's: a request whose response succeeded is given back after it; default false. */
  skipSuccessfulRequests?: boolean;
  /** Whether a finished response succeeded, for the two options above; default `res.statusCode < 400`. */
  requestWasSuccessful?: (req: any, res: any) => boolean | Promise<boolean>;
  /** Answers a 429 instead of the default (after the rate-limit headers are set). */
  handler?: (req: any, res: any, next: (error?: unknown) => void, options: RateLimitOptions & { statusCode: number; message: unknown; requestPropertyName: string }) => unknown;
  /** A 429's body instead of the library's sentence: a string (text/plain), an object (JSON), or a function of (req, res) returning one. */
  message?: unknown;
  /** A 429's status instead of 429. */
  statusCode?: number;
  /** Where the request gets its RateLimitInfo; default 'rateLimit'. */
  requestPropertyName?: string;
  /** false silences this package's run-time warnings; or each: { trustProxy, unixSocket, headersDraftVersion } (express-rate-limit's other checks are accepted and ignored). */
  validate?: boolean | { trustProxy?: boolean; unixSocket?: boolean; headersDraftVersion?: boolean; default?: boolean; [check: string]: unknown };
}

/** What the `backendError` event reports: a request (or more) Redis could not decide. */
export interface BackendErrorEvent {
  /** Requests that failed since the last event. */
  failed: number;
  /** Since the limits were built. */
  errors: number;
  onBackendError: 'allow' | 'deny' | 'local';
  limits: string[];
}

/** Connect-style middleware (express 4 and 5, or any `(req, res, next)`, plain `http` servers too). */
/** The middleware, with express-rate-limit's `resetKey` and `getKey`. */
export interface RateLimitMiddleware {
  (req: any, res: any, next: (error?: unknown) => void): void;
  /** Forgets `key` in every limit: a Promise of whether any held it. */
  resetKey(key: string): Promise<boolean>;
  /** `key`'s hits on the limit named `limitName` (the first when omitted), consuming nothing; undefined when it holds none. */
  getKey(key: string, limitName?: string): Promise<ClientRateLimitInfo | undefined>;
  /** Requests Redis could not decide since the limits were built (0 in process). */
  readonly backendErrors: number;
  /** Of those, the ones decided in this process (`onBackendError: 'local'`). */
  readonly backendFallbacks: number;
  /** False while Redis is known to be unreachable. */
  readonly backendAvailable: boolean;
  /** The limits' names (an unnamed limit's, from its route, once it ran). */
  readonly names: string[];
  on(event: 'backendError', listener: (event: BackendErrorEvent) => void): this;
  on(event: 'backendRecovered', listener: (event: { errors: number; limits: string[] }) => void): this;
  off(event: 'backendError' | 'backendRecovered', listener: (event: any) => void): this;
}

export function rateLimit(options?: RateLimitOptions): RateLimitMiddleware;

/** A request as `requestDecider` reads it; key functions get this same object. */
export interface DescribedRequest {
  method?: string;
  /** The path and query: '/items?page=2'. */
  url?: string;
  /** A fetch `Headers`, an object of name to value(s), or Node's `rawHeaders`. */
  headers?: Headers | Record<string, string | string[] | undefined> | string[];
  /** The peer's address (none: a Unix socket's peer) and port. */
  remoteAddress?: string;
  remotePort?: number;
  [field: string]: unknown;
}

/** What `requestDecider` answers: the library's status, headers and body. */
export interface RequestVerdict {
  /** 0 to let the request through, else the refusal's status (429; 400 no key; 503 Redis or a full table). */
  status: number;
  /** The rate-limit headers the library wrote, as [lower-case name, value] pairs. */
  headers: [string, string][];
  /** A refusal's body (the library's sentence); null when let through. */
  body: string | null;
  rateLimit?: RateLimitInfo;
}

/** Decides described requests for any framework. */
export interface RequestDecider {
  (request: DescribedRequest): Promise<RequestVerdict>;
  resetKey(key: string): Promise<boolean>;
  getKey(key: string, limitName?: string): Promise<ClientRateLimitInfo | undefined>;
  readonly names: string[];
}

/** `rateLimit`'s limit options (not those that answer: the caller answers). */
export function requestDecider(options?: Omit<RateLimitOptions, 'handler' | 'message' | 'statusCode' | 'requestPropertyName' | 'skip' | 'skipFailedRequests' | 'skipSuccessfulRequests' | 'requestWasSuccessful'>): RequestDecider;

/** `import rateLimit from 'sluicegate'`, as express-rate-limit's default export. */
export default rateLimit;

// As express-rate-limit's types: `req.rateLimit` on express's Request (and any framework's
// that uses the `Express` namespace), set by the middleware on the requests it decides.
declare global {
  namespace Express {
    interface Request {
      rateLimit: RateLimitInfo;
    }
  }
}
