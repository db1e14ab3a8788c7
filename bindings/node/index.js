'use strict';
// sluicegate: the Rust rate-limiter engine in process, for Node.js.

const { Limiter, KeyedLimiter } = require('./lib/limiter');
const { ManualClock, DateClock } = require('./lib/clock');
const { throttle } = require('./lib/throttle');
const { RedisLimiter } = require('./lib/redis');
const { rateLimit } = require('./lib/ratelimit');
const { requestDecider } = require('./lib/decider');

const exported = { Limiter, KeyedLimiter, RedisLimiter, ManualClock, DateClock, rateLimit, throttle, requestDecider };

// As express-rate-limit's module: `rateLimit` itself, with every export on it, so that
// `const rateLimit = require('sluicegate')`, `import rateLimit from 'sluicegate'` (also
// through TypeScript's and Babel's CommonJS interop: `default`) and the named forms all work.
module.exports = Object.assign(rateLimit, exported, { default: rateLimit });
