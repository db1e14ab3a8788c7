'use strict';
// Servers on Unix domain sockets, as behind nginx: an app listening on a socket path (what
// `app.listen('app.sock')` does), a client for it, and a real nginx (Debian's nginx-light)
// proxying 127.0.0.1 to the socket with X-Forwarded-For. Without nginx the tests fail,
// saying what to install: they never pass by skipping.

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { freePort } = require('./redis');

/** A fresh directory for sockets and nginx's files, removed by the caller's `rm()`. */
function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluicegate-unix-'));
  return { dir, rm: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Listens with `handler` on the socket `socketPath`; resolves with `{ close }`. */
function listenOnSocket(handler, socketPath) {
  const server = http.createServer(handler);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve({
      close: () => new Promise((done) => {
        server.closeAllConnections?.();
        server.close(() => done());
      }),
    }));
  });
}

/** GET `path` over the socket, or over TCP to `port` from the loopback address `from`;
 * resolves with `{ status, headers, body }`. */
function request({ socketPath, port, from }, path = '/', headers = {}) {
  return new Promise((resolve, reject) => {
    const target = socketPath ? { socketPath } : { host: '127.0.0.1', port, localAddress: from };
    const req = http.get({ ...target, path, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** Starts nginx on a free 127.0.0.1 port, proxying to the socket `socketPath` with
 * `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for` (the usual setup); resolves
 * with `{ port, stop }`. */
async function startNginx(dir, socketPath) {
  if (spawnSync('nginx', ['-v']).error) {
    throw new Error('nginx is needed by these tests: install it (Debian: `apt-get install nginx-light`)');
  }
  const port = await freePort();
  const conf = path.join(dir, 'nginx.conf');
  fs.writeFileSync(conf, `
daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://unix:${socketPath}:;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }
  }
}
`);
  const child = spawn('nginx', ['-c', conf, '-p', dir], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('error', () => {});
  const deadline = Date.now() + 5000;
  for (;;) {
    // A connection accepted, no request sent: the app behind counts nothing.
    const up = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not listen on port ${port}: ${fs.existsSync(`${dir}/error.log`) ? fs.readFileSync(`${dir}/error.log`, 'utf8') : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    port,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

module.exports = { tempDir, listenOnSocket, request, startNginx };
