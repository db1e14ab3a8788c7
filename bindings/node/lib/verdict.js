'use strict';
// A verdict of the native HTTP limiter, as it crosses over: a first line with the key the
// reported limit counted the request under (the library's key extractor's; empty when none),
// `name:value` lines (the headers the library wrote), then for a refusal an empty line and
// the body. Here it is only put on the response, with Node's own `res.setHeader`: nothing is
// formatted in JavaScript.

/** Sets the verdict's headers (from `at`, past the key's line) on `res`; returns the
 * refusal's body, or null for a pass. */
function setHeaders(res, text, at) {
  while (at < text.length) {
    const eol = text.indexOf('\n', at);
    if (eol === at) return text.slice(at + 1);
    // Names have no ':'; the value is everything after the first one.
    const colon = text.indexOf(':', at);
    res.setHeader(text.slice(at, colon), text.slice(colon + 1, eol));
    at = eol + 1;
  }
  return null;
}

module.exports = { setHeaders };
