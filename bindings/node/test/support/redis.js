'use strict';
// A real redis-server (Debian's package) started on a free loopback port and stopped by its
// PID. Without one the tests fail, saying what to install: they never pass by skipping.

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

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

/** Starts redis-server (with `extra` arguments) in a fresh directory, on `port` or a free
 * one; resolves with `{ port, url, pid, stop }`. */
async function startRedis(extra = [], port = undefined) {
  if (spawnSync('redis-server', ['--version']).error) throw new Error(INSTALL);
  port ??= await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluicegate-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra];
  const child = spawn('redis-server', args, { stdio: 'ignore' });
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
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}/`,
    pid: child.pid,
    /** Stops the server by its PID and waits for it to exit. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(child.pid, 'SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Redis Cluster of `masters` nodes, no replicas, every slot served; resolves with
 * `{ nodes, urls, stop }` (`urls`: every node's URL, comma-separated). */
async function startCluster(masters = 3) {
  const nodes = [];
  try {
    for (let i = 0; i < masters; i++) {
      nodes.push(await startRedis(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000']));
    }
    const create = spawnSync(
      'redis-cli',
      ['-p', String(nodes[0].port), '--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8' },
    );
    if (create.error) throw new Error(`redis-cli is needed to make a cluster: ${INSTALL}`);
    if (!/All 16384 slots covered/.test(create.stdout)) throw new Error(`redis-cli --cluster create: ${create.stdout}${create.stderr}`);
    const deadline = Date.now() + 20_000;
    const ready = () =>
      nodes.every((n) => /cluster_state:ok/.test(spawnSync('redis-cli', ['-p', String(n.port), 'CLUSTER', 'INFO'], { encoding: 'utf8' }).stdout));
    while (!ready()) {
      if (Date.now() > deadline) throw new Error('the Redis Cluster did not become ready within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch (error) {
    for (const n of nodes) await n.stop();
    throw error;
  }
  return {
    nodes,
    urls: nodes.map((n) => n.url).join(','),
    async stop() {
      for (const n of nodes) await n.stop();
    },
  };
}

module.exports = { startRedis, startCluster, freePort };
