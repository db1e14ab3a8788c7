'use strict';
// A real redis-server (Debian's package) started on a free loopback port and stopped by its
// PID. Without one the tests fail, saying what to install: they never pass by skipping.

const { spawn, spawnSync } = require('node:child_process');
const net = require('node:net');

const INSTALL = 'redis-server is needed by these tests: install it (Debian: `apt-get install redis-server`)';

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on `port`, or rejects after `ms`. */
async function listening(port, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const up = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on port ${port} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Starts redis-server; resolves with `{ port, url, pid, stop }`. */
async function startRedis() {
  if (spawnSync('redis-server', ['--version']).error) throw new Error(INSTALL);
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('error', () => {});
  try {
    await Promise.race([
      listening(port, 5000),
      exited.then((code) => {
        throw new Error(`redis-server exited with ${code} before listening on port ${port}`);
      }),
    ]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}/`,
    pid: child.pid,
    /** Stops the server by its PID and waits for it to exit. */
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(child.pid, 'SIGTERM');
      await exited;
    },
  };
}

module.exports = { startRedis, freePort };
