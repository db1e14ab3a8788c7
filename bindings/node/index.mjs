// The ESM entry: the CommonJS module's exports, by name.
import sluicegate from './index.js';

export const { Limiter, KeyedLimiter, RedisLimiter, ManualClock, rateLimit, throttle } = sluicegate;
export default sluicegate;
