'use strict';
// `requestDecider(options)`: the library's HTTP decision for any framework. It takes
// `rateLimit`'s limit options and decides a request described as plain values (method, URL,
// headers, the peer's address), answering with what the library wrote: the status, the
// rate-limit headers (`RateLimit-Policy`, `RateLimit`, `Retry-After`, the legacy trio, as
// configured) and the refusal's body. A framework adapter (or a user's own) only puts them on
// its response: the same headers, byte for byte, as the express middleware and the Rust layer.

const { rateLimit } = require('./ratelimit');
const { decide, refuse } = require('./adapter_decide');
const { describe } = require('./args');

const WHAT = 'requestDecider(options)';

/** The options of `rateLimit` that answer a request, which the decider leaves to its caller. */
const ANSWERING = ['handler', 'message', 'statusCode', 'requestPropertyName', 'skip', 'skipFailedRequests', 'skipSuccessfulRequests', 'requestWasSuccessful'];

function requestDecider(options = {}) {
  if (options !== null && typeof options === 'object') {
    for (const name of ANSWERING) {
      if (options[name] !== undefined) throw new TypeError(`${WHAT}: \`${name}\` is the caller's to do: the decider only decides, and returns the status, headers and body`);
    }
  }
  const middleware = rateLimit({ ...options, handler: refuse });
  /**
   * Decides `{ method, url, headers, remoteAddress, remotePort }` (`url` the path and query;
   * `headers` a fetch `Headers`, an object of name → value, or Node's `rawHeaders`; no
   * `remoteAddress` is a Unix socket's peer). Key functions get this same object. Resolves
   * with `{ status, headers, body, rateLimit }`: `status` 0 to let it through, else the
   * refusal's; `headers` `[name, value]` pairs; `rateLimit` the tightest limit's info.
   */
  const decideRequest = (request) => {
    let req;
    try {
      req = described(request);
    } catch (error) {
      return Promise.reject(error);
    }
    return decide(middleware, req).then(({ status, headers, body, info }) => ({ status, headers, body, rateLimit: info }));
  };
  decideRequest.resetKey = (key) => middleware.resetKey(key);
  decideRequest.getKey = (key, name) => middleware.getKey(key, name);
  Object.defineProperty(decideRequest, 'names', { get: () => middleware.names });
  return decideRequest;
}

/** The request as `rateLimit` reads it, with the caller's fields kept for key functions. */
function described(request) {
  if (request === null || typeof request !== 'object') throw new TypeError(`${WHAT}: a request is { method, url, headers, remoteAddress, remotePort }, got ${describe(request)}`);
  const { method = 'GET', url = '/', headers, remoteAddress, remotePort } = request;
  if (typeof method !== 'string' || typeof url !== 'string') throw new TypeError(`${WHAT}: a request's \`method\` and \`url\` are strings, got ${describe(method)} and ${describe(url)}`);
  if (remoteAddress !== undefined && typeof remoteAddress !== 'string') throw new TypeError(`${WHAT}: \`remoteAddress\` is a string, got ${describe(remoteAddress)}`);
  return { ...request, method, url, rawHeaders: rawHeaders(headers), socket: { remoteAddress, remotePort: Number(remotePort) || 0 } };
}

/** Headers as Node's `rawHeaders` (names and values, alternating). */
function rawHeaders(headers) {
  if (headers === undefined || headers === null) return [];
  if (Array.isArray(headers)) return headers.map(String);
  const raw = [];
  const entries = typeof headers.entries === 'function' && typeof headers.get === 'function' ? headers.entries() : Object.entries(headers);
  for (const [name, value] of entries) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v !== undefined) raw.push(name, String(v));
    }
  }
  return raw;
}

module.exports = { requestDecider, rawHeaders };
