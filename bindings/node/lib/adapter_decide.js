'use strict';
// The framework adapters' one way to decide a request: through an express-style `rateLimit`
// middleware (the library's one HTTP decision, headers and bodies), with a response object
// that collects what the middleware would write instead of writing it. Each adapter then puts
// the collected headers on its own framework's response (fastify's reply, koa's ctx, hono's
// context), and answers a refusal its framework's way. Nothing is decided or formatted here.

/**
 * Decides `req` with `middleware`. `req` is what the library reads of a request: `{ method,
 * url, rawHeaders, socket }` (a Node `IncomingMessage` has them; an adapter for a fetch-style
 * framework builds them), plus whatever the limits' key functions read. Resolves with
 * `{ status, headers, body, info }`: `status` 0 when the request passes (after a leaky
 * bucket's shaping wait), else the refusal's (429, or 400 for a missing key, 503 for a Redis
 * outage under `onBackendError: 'deny'` or a full table); `headers` the library's, as
 * `[lowercase name, value]` pairs in the order written; `body` the library's text for a
 * refusal; `info` the request's `rateLimit` info (of the tightest limit), when a limit decided.
 * The middleware must have been made with `handler: refuse` (below).
 */
function decide(middleware, req) {
  return new Promise((resolve, reject) => {
    const res = new Collected(req, resolve);
    middleware(req, res, (error) => (error ? reject(error) : resolve(res.outcome(0, null))));
  });
}

/** The `handler` an adapter's middleware is made with: a 429 is collected, not sent. Its
 * body is the library's (adapters give the middleware no `message`), which `rateLimit` hands a
 * handler without its final line end: put back, so the body is the one express sends. */
function refuse(_req, res, _next, options) {
  res.end(`${options.message}\n`, 429);
}

/** A response that keeps what is written to it (only what `rateLimit` calls). */
class Collected {
  #req;
  #resolve;

  constructor(req, resolve) {
    this.#req = req;
    this.#resolve = resolve;
    this.headers = new Map();
    this.statusCode = 200;
    this.writableEnded = false;
  }

  setHeader(name, value) {
    this.headers.set(name.toLowerCase(), String(value));
  }

  /** Draft-8's fields listed side by side: only within one decision here. */
  appendHeader(name, value) {
    const key = name.toLowerCase();
    const old = this.headers.get(key);
    this.headers.set(key, old === undefined ? String(value) : `${old}, ${value}`);
  }

  getHeader(name) {
    return this.headers.get(name.toLowerCase());
  }

  hasHeader(name) {
    return this.headers.has(name.toLowerCase());
  }

  removeHeader(name) {
    this.headers.delete(name.toLowerCase());
  }

  end(body, status = this.statusCode) {
    if (this.writableEnded) return;
    this.writableEnded = true;
    this.#resolve(this.outcome(status, body === undefined ? '' : String(body)));
  }

  outcome(status, body) {
    return { status, headers: [...this.headers], body, info: this.#req.rateLimit };
  }
}

module.exports = { decide, refuse };
