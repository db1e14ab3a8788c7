'use strict';
// `rateLimit`'s one-time warnings (`process.emitWarning`, each once per middleware), for set-ups
// that would silently count every client together, as express-rate-limit warns at run time:
// - `SLUICEGATE_UNIX_SOCKET`: requests arrive on a Unix socket (no peer address) while `unix`
//   is not among `trustedProxies`: the library's sentence (`ClientIp::shared_key_warning`);
// - `SLUICEGATE_TRUST_PROXY`: express's `trust proxy` is set but `trustedProxies` is not, so
//   behind a proxy every client has the proxy's address; the warning says what to write.
// `validate: { unixSocket: false, trustProxy: false }` (or `validate: false`) silences them.

const native = require('./native');

/** express's `trust proxy` keywords, as the networks they name. */
const KEYWORDS = {
  loopback: ['127.0.0.0/8', '::1'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** The warnings of one middleware: `handle()` is its native limiter, `o` its options. */
function warnings(handle, o) {
  const trusting = o.native.trustedProxies.length > 0;
  let unix = o.validate.unixSocket;
  let trustProxy = o.validate.trustProxy && !trusting;
  let keyedByIp = null;
  const byIp = () => (keyedByIp ??= native.httpKeyedByIp(handle()));
  /** Checks `req` (cheap once both are settled). */
  return function check(req) {
    if (unix && req.socket?.remoteAddress === undefined) {
      unix = false;
      const text = native.httpPeerWarning(handle());
      if (text) process.emitWarning(`rateLimit: ${text}`, { code: 'SLUICEGATE_UNIX_SOCKET' });
    }
    if (trustProxy) {
      trustProxy = false;
      const setting = typeof req.app?.get === 'function' ? req.app.get('trust proxy') : undefined;
      if (setting !== undefined && setting !== false && byIp()) {
        process.emitWarning(trustProxyWarning(setting), { code: 'SLUICEGATE_TRUST_PROXY' });
      }
    }
  };
}

/** What to write instead of `app.set('trust proxy', setting)`. */
function trustProxyWarning(setting) {
  const listed = typeof setting === 'string' || Array.isArray(setting)
    ? [setting].flat().flatMap((s) => String(s).split(',')).map((s) => s.trim()).filter(Boolean)
    : [];
  const networks = listed.flatMap((entry) => KEYWORDS[entry] ?? [entry]);
  const instead = networks.length > 0
    ? `trustedProxies: ${JSON.stringify(networks)}`
    : "trustedProxies: [the addresses or networks of your proxies] (for example ['10.0.0.0/8'])";
  return `rateLimit: express's 'trust proxy' is set (${JSON.stringify(setting)}), but rateLimit does not read ` +
    "it (nor req.ip): it keys each client by the socket's peer address, and reads X-Forwarded-For only from " +
    'the proxies in its own `trustedProxies`, so behind a proxy every client now shares the proxy\'s address. ' +
    `Give the middleware ${instead}; validate: { trustProxy: false } silences this warning`;
}

module.exports = { warnings, trustProxyWarning };
