'use strict';
// sluicegate: the Rust rate-limiter engine in process, for Node.js.

const { Limiter, KeyedLimiter } = require('./lib/limiter');
const { ManualClock } = require('./lib/clock');
const { throttle } = require('./lib/throttle');

module.exports = { Limiter, KeyedLimiter, ManualClock, throttle };
