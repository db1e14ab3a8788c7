'use strict';
// A gate decides a request against every limit of a throttle at once, all-or-nothing, in
// the engine (never by combining decisions here): keys in, one decision out. In process, its
// quotas can change at run time (the engine's `set_quota`).

const { NativeGroup, connectRedisGroup } = require('./native');
const { OUT, decision } = require('./decision');
const { redisOptions, answer, connectError } = require('./redis');
const { built, withCode } = require('./args');

const CHECK = 0;

/** In-process limits: one synchronous native call per decision. */
function localGate(limits) {
  const group = nativeGroup(limits);
  return {
    decide: (keys) => decision(group.decide(keys, CHECK, 1)),
    /** The engine's quota change at run time: each key's history carries over. */
    setQuotas: (quotas) => built(() => group.setQuotas(quotas)),
    rates: () => group.rates(),
  };
}

function nativeGroup(limits) {
  return built(() => new NativeGroup(
    limits.map((l) => l.quota),
    limits.map((l) => l.algorithm),
    null,
    OUT,
  ));
}

/**
 * Limits on Redis (`options.redis`, a URL or `{ url, caCert, ... }`), shared by every process that throttles with the
 * same quotas, algorithms and prefixes: limit `i` lives under `<prefix><name>:` (`name`
 * defaults to `i`). Connects on first use, and again after a failed attempt.
 */
function redisGate(limits, options) {
  const base = options.prefix ?? 'sluicegate:axios:';
  if (typeof base !== 'string') throw new TypeError('throttle: `prefix` must be a string');
  const settings = limits.map((limit) =>
    redisOptions({ ...options, quota: limit.quota, algorithm: limit.algorithm, prefix: `${base}${limit.name}:` }, 'throttle'),
  );
  let group = null;
  const connect = () => {
    group ??= connectRedisGroup(settings).catch((error) => {
      group = null;
      throw connectError(error);
    });
    return group;
  };
  // The quotas as the engine reads them, for `getMaxRPS`.
  const rates = nativeGroup(limits).rates();
  return {
    decide: async (keys) => answer(await (await connect()).decide(keys, CHECK, 1)),
    setQuotas: () => {
      throw withCode(new TypeError('throttle: the quota of a limit on Redis is part of its Redis keys and cannot change at run time: build a new throttle'), 'ERR_SLUICEGATE_UNSUPPORTED_OPTION');
    },
    rates: () => rates,
  };
}

module.exports = { localGate, redisGate };
