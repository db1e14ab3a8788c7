'use strict';
// An express app behind rateLimit in its own process, for the tests where processes share a
// limit through Redis: `GET /` answers "ok\n". Prints `listening on http://ADDR` (as the Rust
// example server does), and exits on SIGTERM.
//   node ratelimit_worker.js EXPRESS OPTIONS_JSON      (EXPRESS: express or express4)

const [expressName, options] = process.argv.slice(2);
const express = require(expressName);
const { rateLimit } = require('../..');

const app = express();
app.use(rateLimit(JSON.parse(options)));
app.get('/', (req, res) => res.send('ok\n'));
const server = app.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections?.();
  server.close(() => process.exit(0));
});
