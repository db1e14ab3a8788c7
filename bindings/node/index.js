'use strict';
// sluicegate: the Rust rate-limiter engine in process, for Node.js.

const { Limiter, KeyedLimiter } = require('./lib/limiter');
const { ManualClock } = require('./lib/clock');
const { throttle } = require('./lib/throttle');
const { RedisLimiter } = require('./lib/redis');
const { rateLimit } = require('./lib/ratelimit');

module.exports = { Limiter, KeyedLimiter, RedisLimiter, ManualClock, rateLimit, throttle };
