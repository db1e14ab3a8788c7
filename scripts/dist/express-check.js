#!/usr/bin/env node
// Starts `node APP` (the README's express example, listening on 127.0.0.1:$PORT), sends it
// six GET / requests and checks the answers: five 200s, then a 429 with Retry-After, and
// RateLimit-Policy and RateLimit on every response. Stops the app (SIGTERM) whatever
// happens. Also checks that `sluicegate` loaded its native module from the platform package.
// Usage: node express-check.js APP PLATFORM   (run in the project that installed the tarballs;
// PLATFORM is napi-rs's name, linux-x64-gnu, linux-arm64-gnu...)
'use strict';

const { spawn } = require('node:child_process');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');

const app = path.resolve(process.argv[2]);
const platformPackage = `sluicegate-${process.argv[3]}`;

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function get(port) {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res));
    });
    request.on('error', reject);
  });
}

async function waitUntilUp(port, child) {
  for (let i = 0; i < 100; i += 1) {
    if (child.exitCode !== null) throw new Error(`the app exited with ${child.exitCode} before it listened`);
    const up = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => { socket.destroy(); resolve(true); });
      socket.on('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listened on 127.0.0.1:${port} within 10 s`);
}

function check(condition, message) {
  if (!condition) throw new Error(message);
  console.log(`ok: ${message}`);
}

async function main() {
  const native = require.resolve(platformPackage, { paths: [process.cwd()] });
  check(native.includes(`${path.sep}node_modules${path.sep}${platformPackage}${path.sep}`),
    `the native module comes from the platform package (${path.relative(process.cwd(), native)})`);

  const port = await freePort();
  const child = spawn(process.execPath, [app], { env: { ...process.env, PORT: String(port) }, stdio: 'inherit' });
  const stopped = new Promise((resolve) => child.on('exit', resolve));
  try {
    await waitUntilUp(port, child);
    const statuses = [];
    let refused = null;
    for (let i = 0; i < 6; i += 1) {
      const res = await get(port);
      statuses.push(res.statusCode);
      for (const name of ['ratelimit-policy', 'ratelimit']) {
        check(res.headers[name], `response ${i + 1} (${res.statusCode}) carries ${name}: ${res.headers[name]}`);
      }
      if (res.statusCode === 429) refused = res;
    }
    check(statuses.join(' ') === '200 200 200 200 200 429', `statuses ${statuses.join(' ')} are five 200s, then a 429`);
    check(Number(refused.headers['retry-after']) >= 1, `the 429 carries Retry-After: ${refused.headers['retry-after']}`);
  } finally {
    child.kill('SIGTERM');
    await stopped;
  }
}

main().catch((error) => {
  console.error(`express-check: ${error.message}`);
  process.exit(1);
});
