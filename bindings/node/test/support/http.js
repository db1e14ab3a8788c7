'use strict';
// A real HTTP server on 127.0.0.1 (a free port) that records when each request arrives.

const http = require('node:http');

/**
 * Starts a server answering with `handler(req, res, arrival)` (default: 200 "ok") and
 * resolves with `{ url, host, arrivals, close }`; `arrivals` holds `{ at, path, headers }`,
 * `at` in ms on performance.now().
 */
function serve(handler) {
  const arrivals = [];
  const server = http.createServer((req, res) => {
    const arrival = { at: performance.now(), path: req.url, headers: req.headers };
    arrivals.push(arrival);
    if (handler) handler(req, res, arrival, arrivals);
    else res.end('ok');
  });
  server.keepAliveTimeout = 100;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        host: `127.0.0.1:${port}`,
        arrivals,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

module.exports = { serve };
