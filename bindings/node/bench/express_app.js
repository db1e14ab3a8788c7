'use strict';
// One express hello world for bench/express.js, in its own process: behind sluicegate's
// rateLimit, behind express-rate-limit (memory store), or with no limiter. Both limiters
// have one limit keyed by client IP, a quota no run reaches (every request passes), and
// their standard headers on (RateLimit-Policy and RateLimit: draft-10 here, draft-8 there,
// the draft with the same two headers); no legacy headers. Prints `listening on http://ADDR`.
//   node bench/express_app.js none|sluicegate|express-rate-limit

const express = require('express');

const which = process.argv[2];
const app = express();
if (which === 'sluicegate') {
  const { rateLimit } = require('..');
  app.use(rateLimit({ quota: '100000000/minute' }));
} else if (which === 'express-rate-limit') {
  const { rateLimit } = require('express-rate-limit');
  app.use(rateLimit({ windowMs: 60_000, limit: 100_000_000, standardHeaders: 'draft-8', legacyHeaders: false }));
} else if (which !== 'none') {
  throw new Error(`usage: node bench/express_app.js none|sluicegate|express-rate-limit, not ${which}`);
}
app.get('/', (req, res) => res.send('Hello World!'));
const server = app.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => {
  server.closeAllConnections?.();
  server.close(() => process.exit(0));
});
