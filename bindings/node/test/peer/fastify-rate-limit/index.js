'use strict';
// @fastify/rate-limit's tests (test/, copied unchanged from fastify/fastify-rate-limit at
// 78a7d41, v11.2.0; MIT, LICENSE) require '../index': here that is sluicegate's plugin. They
// move time with node:test's mock timers, which move Date.now() but not the engine's clock:
// each registration gets `clock: new DateClock()` (the limit then reads Date.now()), as the
// README tells users whose tests use fake timers. Nothing else is added.
const plugin = require('../../../lib/fastify');
const { DateClock } = require('../../../lib/clock');

function withDateClock(fastify, options) {
  return plugin(fastify, { clock: new DateClock(), ...options });
}
for (const symbol of Object.getOwnPropertySymbols(plugin)) withDateClock[symbol] = plugin[symbol];
module.exports = withDateClock;
