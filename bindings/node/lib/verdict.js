'use strict';
// A verdict of the native HTTP limiter, as it crosses over: a first line with the key the
// reported limit counted the request under (the library's key extractor's; empty when none),
// `name:value` lines (the headers the library wrote), then for a refusal an empty line and
// the body. Here it is only put on the response, with Node's own `res.setHeader`: nothing is
// formatted in JavaScript.

/** Every header name the library writes for a limit (lower case, as it writes them). */
const RATE_LIMIT_HEADERS = [
  'ratelimit', 'ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset',
  'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after',
];

/** Draft-8's two fields, which several middlewares list side by side, as express-rate-limit does. */
const LISTED = new Set(['ratelimit', 'ratelimit-policy']);

/**
 * Sets the verdict's headers (from `at`, past the key's line) on `res`; returns the
 * refusal's body, or null for a pass. A refusal's headers describe the limit that refused:
 * those an earlier middleware set for its own limits go first. With draft-8 (`listed`), a
 * pass adds its `RateLimit` and `RateLimit-Policy` after any an earlier middleware set.
 */
function setHeaders(res, text, at, refusing, listed) {
  if (refusing) for (const name of RATE_LIMIT_HEADERS) res.removeHeader(name);
  while (at < text.length) {
    const eol = text.indexOf('\n', at);
    if (eol === at) return text.slice(at + 1);
    // Names have no ':'; the value is everything after the first one.
    const colon = text.indexOf(':', at);
    const name = text.slice(at, colon);
    const value = text.slice(colon + 1, eol);
    if (listed && !refusing && LISTED.has(name) && res.hasHeader(name)) res.appendHeader(name, value);
    else res.setHeader(name, value);
    at = eol + 1;
  }
  return null;
}

module.exports = { setHeaders, RATE_LIMIT_HEADERS };
