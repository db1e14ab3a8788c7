'use strict';
// `sluicegate/hono`: hono middleware taking hono-rate-limiter's options
// (`app.use(rateLimiter({ windowMs: 60_000, limit: 100 }))`). Each request is decided by the
// library's one HTTP decision (lib/decider.js) from hono's fetch `Request` and the peer's
// address: on @hono/node-server the socket's (`c.env.incoming`), elsewhere what the
// `getConnInfo` option (hono's helper of your runtime) says. The client address is the
// library's (the peer, or through `trustedProxies` only), as are the headers and the body of
// a refusal, put on hono's response.

const { requestDecider, rawHeaders } = require('./decider');
const { describe, knownOptions } = require('./args');

const WHAT = "rateLimiter(options) of 'sluicegate/hono'";

/** hono-rate-limiter's options that do not exist here: why, and what instead. */
const UNSUPPORTED = {
  store: "the store is sluicegate's engine: in process by default, or give `redis: 'redis://host:6379/'`",
  skipFailedRequests: 'not in the hono adapter: use the express middleware, or refund with resetKey',
  skipSuccessfulRequests: 'not in the hono adapter: use the express middleware, or refund with resetKey',
  requestWasSuccessful: 'not in the hono adapter',
};

const KNOWN = [
  'windowMs', 'limit', 'keyGenerator', 'standardHeaders', 'legacyHeaders', 'message', 'statusCode', 'handler', 'skip', 'requestPropertyName',
  'name', 'identifier', 'quota', 'algorithm', 'limits', 'trustedProxies', 'forwardedHeaders', 'ipv6Prefix', 'ipv6Subnet', 'redis', 'redisCluster',
  'onBackendError', 'maxKeys', 'clock', 'logger', 'validate', 'getConnInfo',
];

function rateLimiter(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${WHAT} takes an options object such as { windowMs: 60000, limit: 100 }, got ${describe(options)}`);
  for (const name of Object.keys(options)) {
    if (name in UNSUPPORTED) throw new TypeError(`${WHAT}: \`${name}\` (hono-rate-limiter) has no counterpart here: ${UNSUPPORTED[name]}`);
  }
  knownOptions(options, KNOWN, WHAT);
  const { keyGenerator, message, handler, skip, getConnInfo, ...limits } = options;
  for (const [name, fn] of Object.entries({ keyGenerator, handler, skip, getConnInfo })) {
    if (fn !== undefined && typeof fn !== 'function') throw new TypeError(`${WHAT}: \`${name}\` must be a function, got ${describe(fn)}`);
  }
  const statusCode = options.statusCode ?? 429;
  const requestPropertyName = options.requestPropertyName ?? 'rateLimit';
  delete limits.statusCode;
  delete limits.requestPropertyName;
  const decideRequest = requestDecider({
    ...limits,
    // `keyGenerator(c)`'s key, found before deciding; else the library's client address.
    ...(keyGenerator !== undefined ? { key: (req) => req.key } : {}),
  });

  const middleware = async function sluicegateHono(c, next) {
    if (skip !== undefined && (await skip(c))) return next();
    const key = keyGenerator === undefined ? undefined : await keyGenerator(c);
    const { status, headers, body, rateLimit } = await decideRequest({
      method: c.req.method,
      url: pathAndQuery(c.req.url),
      headers: rawHeaders(c.req.raw.headers),
      ...peer(c, getConnInfo),
      key: key === undefined || key === null ? null : String(key),
    });
    if (rateLimit !== undefined) c.set(requestPropertyName, rateLimit);
    for (const [name, value] of headers) c.header(name, value);
    if (status === 0) return next();
    if (status !== 429) return c.text(body, status);
    if (handler !== undefined) return handler(c, next, { ...options, statusCode, message: message ?? body.replace(/\n$/, '') });
    const value = typeof message === 'function' ? await message(c) : message ?? body;
    if (typeof value === 'string') return c.text(value, statusCode);
    return c.json(value, statusCode);
  };
  middleware.resetKey = decideRequest.resetKey;
  middleware.getKey = decideRequest.getKey;
  return middleware;
}

/** The path and query of `url` (hono's request URL is absolute). */
function pathAndQuery(url) {
  const at = url.indexOf('/', url.indexOf('//') + 2);
  return at < 0 ? '/' : url.slice(at);
}

/** The peer's address and port: `getConnInfo(c)`'s, or the Node socket @hono/node-server hands over. */
function peer(c, getConnInfo) {
  if (getConnInfo !== undefined) {
    const remote = getConnInfo(c)?.remote ?? {};
    return { remoteAddress: remote.address, remotePort: remote.port };
  }
  const socket = (c.env?.server ?? c.env)?.incoming?.socket;
  return { remoteAddress: socket?.remoteAddress, remotePort: socket?.remotePort };
}

// As hono-rate-limiter's: `import { rateLimiter } from ...`; the default export is it too.
module.exports = rateLimiter;
module.exports.rateLimiter = rateLimiter;
module.exports.default = rateLimiter;
