'use strict';
// Real servers for the middleware's tests: express 4 and express 5 from npm (the same
// middleware under each), or a plain `http` server, listening on a free port; and a client
// that reads back exactly what came over the wire.

const http = require('node:http');

/** Both express majors, by name: every middleware test runs under each. */
const EXPRESS = { 'express 4': require('express4'), 'express 5': require('express') };

/** An express app (of `express`, one of EXPRESS) with `middleware` in front of `GET /`,
 * which answers "ok" (and the request's rateLimit info as JSON under /info). */
function expressApp(express, middleware) {
  const app = express();
  app.use(middleware);
  app.get('/', (req, res) => res.send('ok'));
  app.get('/info', (req, res) => res.json(req.rateLimit ?? null));
  return app;
}

/** Listens with `handler` (an express app or a plain request listener) on `host` port 0;
 * resolves with `{ url, port, close }`. */
function listen(handler, host = '127.0.0.1') {
  const server = http.createServer(handler);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        port,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

/**
 * GET `path` of `base` on a fresh connection, with `headers` (from `localAddress` when given,
 * such as 127.0.0.99: another client of the loopback); resolves with `{ status,
 * headers, raw, body }`: `headers` by lowercase name, `raw` the `[name, value]` pairs as they
 * came over the wire (case kept), `body` a string.
 */
function get(base, path = '/', headers = {}, localAddress = undefined) {
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}${path}`, { headers, agent: false, localAddress }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => {
        const raw = [];
        for (let i = 0; i < response.rawHeaders.length; i += 2) raw.push([response.rawHeaders[i], response.rawHeaders[i + 1]]);
        resolve({ status: response.statusCode, headers: response.headers, raw, body: Buffer.concat(chunks).toString('utf8') });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

/** The rate-limit headers of a response as sent (name as written, value), sorted by name. */
function rateLimitHeaders(response, also = []) {
  const names = new Set(['ratelimit-policy', 'ratelimit', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', ...also]);
  return response.raw.filter(([name]) => names.has(name.toLowerCase())).sort(([a], [b]) => a.localeCompare(b));
}

/** Serves `middleware` in an app of `express` for the time of `fn(server)`, then closes it. */
async function serving(express, middleware, fn) {
  const server = await listen(expressApp(express, middleware));
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

module.exports = { EXPRESS, expressApp, listen, serving, get, rateLimitHeaders };
