// The ESM entry: the CommonJS module's exports, by name, and `rateLimit` as the default
// export (express-rate-limit's documented form, `import rateLimit from 'sluicegate'`).
import sluicegate from './index.js';

export const { Limiter, KeyedLimiter, RedisLimiter, ManualClock, DateClock, rateLimit, throttle, requestDecider } = sluicegate;
export default rateLimit;
