// A typed example over index.d.ts: `tsc --noEmit -p test/types` (ci.sh) type-checks it, so
// the declarations stay true to the package's API. Never run.
import { KeyedLimiter, Limiter, ManualClock, RedisLimiter, rateLimit, throttle, type Decision, type RateLimitInfo, type RateLimitMiddleware } from 'sluicegate';

const clock = new ManualClock();
const perUser = new KeyedLimiter({ quota: '100/minute burst 20', algorithm: 'sliding-window', maxKeys: 100_000, clock });
const d: Decision = perUser.check('user:42', 3);
const retry: number | null = d.retryAfter;
const full: boolean = d.reason === 'table-full';
const forgot: boolean = perUser.reset('user:42');
const one = new Limiter({ quota: '1000/second' });
one.peek(2);

async function shared(): Promise<void> {
  const limiter = await RedisLimiter.connect({ quota: '100/minute', url: 'rediss://127.0.0.1:6380/', caCert: '/etc/ssl/redis-ca.pem', prefix: 'app:' });
  const decided: Decision = await limiter.check('user:42');
  const gone: boolean = await limiter.reset('user:42');
  void gone;
  void decided;
  await limiter.close();
}

const middleware = rateLimit({ windowMs: 60_000, limit: 5, legacyHeaders: true, maxKeys: 10_000, standardHeaders: 'draft-7' });
const perPlan = rateLimit({ windowMs: 60_000, limit: async (req) => (req.user ? 100 : 10), maxTiers: 4 });

interface AxiosLike {
  interceptors: { request: { use: Function }; response: { use: Function } };
  get(url: string): Promise<unknown>;
}
declare const axiosInstance: AxiosLike;
const api = throttle(axiosInstance, { maxRequests: 5, perMilliseconds: 1000, maxQueue: 100, maxWait: 5_000 });
const rps: number = api.getMaxRPS();
api.setMaxRPS(10);
api.setRateLimitOptions({ maxRequests: 2, perMilliseconds: 100 });
api.setRateLimitOptions(null);
const waiting: number = api.getQueue().length;
throttle(axiosInstance, { limits: [{ maxRequests: 5, duration: '2s' }, { quota: '1/second', key: (config) => String(config.url) }] });

const unblocked: Promise<boolean> = middleware.resetKey('127.0.0.1');
const hits: Promise<number | undefined> = middleware.getKey('127.0.0.1').then((info) => info?.totalHits);
const until: Promise<Date | undefined> = perPlan.getKey('127.0.0.1', 'ip').then((info) => info?.resetTime);
const closed = rateLimit({ windowMs: 60_000, max: 0 });
const overTls = rateLimit({
  quota: '100/minute',
  redis: { url: 'rediss://127.0.0.1:6380/', caCert: '/etc/ssl/redis-ca.pem', clientCert: new Uint8Array(0), clientKey: '-----BEGIN PRIVATE KEY-----' },
});
const viaSentinel = rateLimit({ quota: '100/minute', redis: { url: 'redis-sentinel://127.0.0.1:26379/#mymaster', sentinelPassword: 'secret' } });
void overTls;
void viaSentinel;
const defaults: RateLimitMiddleware = rateLimit(); // express-rate-limit's defaults: 5 a minute
const signIn = rateLimit({ windowMs: 15 * 60_000, limit: 5, skipSuccessfulRequests: true });
const failuresOnly = rateLimit({ quota: '10/minute', skipFailedRequests: true, requestWasSuccessful: async (_req, res) => res.statusCode !== 503 });
const counted = (req: { rateLimit: RateLimitInfo }): string => req.rateLimit.key;
void [retry, full, forgot, shared, middleware, perPlan, rps, waiting, unblocked, hits, until, closed, defaults, counted, signIn, failuresOnly];
