'use strict';
// A gate decides a request against every limit of a throttle at once, all-or-nothing, in
// the engine (never by combining decisions here): keys in, one decision out.

const { NativeGroup, connectRedisGroup } = require('./native');
const { OUT, decision } = require('./decision');
const { redisOptions, answer, connectError } = require('./redis');

const CHECK = 0;

/** In-process limits: one synchronous native call per decision. */
function localGate(limits) {
  const group = new NativeGroup(
    limits.map((l) => l.quota),
    limits.map((l) => l.algorithm),
    null,
    OUT,
  );
  return (keys) => decision(group.decide(keys, CHECK, 1));
}

/**
 * Limits on Redis (`options.redis`, a URL), shared by every process that throttles with the
 * same quotas, algorithms and prefixes: limit `i` lives under `<prefix><name>:` (`name`
 * defaults to `i`). Connects on first use, and again after a failed attempt.
 */
function redisGate(limits, options) {
  const base = options.prefix ?? 'sluicegate:axios:';
  if (typeof base !== 'string') throw new TypeError('throttle: `prefix` must be a string');
  const settings = limits.map((limit) =>
    redisOptions({ ...options, quota: limit.quota, algorithm: limit.algorithm, url: options.redis, prefix: `${base}${limit.name}:` }, 'throttle'),
  );
  let group = null;
  const connect = () => {
    group ??= connectRedisGroup(settings).catch((error) => {
      group = null;
      throw connectError(error);
    });
    return group;
  };
  return async (keys) => answer(await (await connect()).decide(keys, CHECK, 1));
}

module.exports = { localGate, redisGate };
