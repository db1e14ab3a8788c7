'use strict';
// Servers in their own processes, for the tests where several front ends share one limit:
// the Rust example server `http_server`, and an express app running `rateLimit`
// (ratelimit_worker.js). Each prints `listening on http://ADDR` first and is stopped by its PID.

const { spawn, execFileSync } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

let built = null;

/** The Rust example server the answers are compared with, built by cargo once a process
 * from this checkout (at once when the workspace's release tests have built it: the same
 * features, so the same artifact), so that it is never missing or stale. */
function httpServerBinary() {
  if (built === null) {
    try {
      execFileSync('cargo', ['build', '--workspace', '--release', '--all-features', '--example', 'http_server'], {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    } catch (error) {
      throw new Error(`cannot build the Rust example server http_server:\n${String(error.stderr).slice(-4000)}`);
    }
    const target = process.env.CARGO_TARGET_DIR ? path.resolve(ROOT, process.env.CARGO_TARGET_DIR) : path.join(ROOT, 'target');
    built = path.join(target, 'release', 'examples', 'http_server');
  }
  return built;
}

/** Starts `command args` and resolves with `{ url, pid, stop }` once it prints
 * `listening on http://ADDR`; rejects with its output if it exits first. */
function startServer(command, args) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  let errors = '';
  child.stderr.on('data', (chunk) => {
    errors += chunk;
  });
  const lines = readline.createInterface({ input: child.stdout });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    exited.then((code) => reject(new Error(`${path.basename(command)} exited with ${code} before listening: ${errors}`)));
    lines.once('line', (line) => {
      const match = /^listening on (http:\/\/\S+)$/.exec(line);
      if (!match) {
        child.kill('SIGKILL');
        reject(new Error(`${path.basename(command)} printed ${JSON.stringify(line)} instead of "listening on http://ADDR"`));
        return;
      }
      resolve({
        url: match[1],
        pid: child.pid,
        /** Stops the server by its PID and waits for it to exit. */
        async stop() {
          if (child.exitCode === null && child.signalCode === null) {
            process.kill(child.pid, 'SIGTERM');
            await exited;
          }
        },
      });
    });
  });
}

/** The Rust example server with `args` (`--limit`, `--redis`...), on a free port. */
function startHttpServer(args) {
  return startServer(httpServerBinary(), ['--listen', '127.0.0.1:0', ...args]);
}

/** An express app (`express` or `express4`) behind `rateLimit(options)` in its own process. */
function startExpressWorker(express, options) {
  return startServer(process.execPath, [path.join(__dirname, 'ratelimit_worker.js'), express, JSON.stringify(options)]);
}

module.exports = { startHttpServer, startExpressWorker, httpServerBinary };
