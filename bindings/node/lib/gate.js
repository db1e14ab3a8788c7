'use strict';
// A gate decides a request against every limit of a throttle at once, all-or-nothing, in
// the engine (never by combining decisions here): keys in, one decision out.

const { NativeGroup } = require('./native');
const { OUT, decision } = require('./decision');

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

module.exports = { localGate };
