'use strict';
// TLS for the Redis tests: certificates made by the `openssl` command line in a temporary
// directory (a CA, another CA, a server certificate for 127.0.0.1 and a client certificate,
// both signed by the CA), a real redis-server serving TLS only, and a real redis-sentinel
// watching a redis-server. Without openssl or redis-sentinel the tests fail, saying what to
// install.

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startRedis, freePort } = require('./redis');

function openssl(dir, args) {
  const run = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (run.error) throw new Error(`openssl is needed to make the test's certificates (Debian: \`apt-get install openssl\`): ${run.error.message}`);
  if (run.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${run.stderr}`);
}

/** A key and a certificate `name`, signed by the CA, with the extension line `extension`. */
function signed(dir, name, common, extension) {
  fs.writeFileSync(path.join(dir, `${name}.ext`), `${extension}\n`);
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${common}`, '-keyout', `${name}.key`, '-out', `${name}.csr`]);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-extfile', `${name}.ext`, '-out', `${name}.crt`]);
}

/** Makes every file; `{ dir, path(name), remove() }`. */
function makeTlsFiles() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluicegate-tls-'));
  for (const ca of ['ca', 'other-ca']) {
    openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=sluicegate test ${ca}`, '-keyout', `${ca}.key`, '-out', `${ca}.crt`]);
  }
  signed(dir, 'server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost');
  signed(dir, 'client', 'sluicegate client', 'extendedKeyUsage=clientAuth');
  return {
    dir,
    path: (name) => path.join(dir, name),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** A redis-server serving TLS only (no plain port) with `files`' server certificate; with
 * `mutual`, refusing clients without a certificate signed by the CA. `{ port, url, cli(args), stop }`. */
async function startTlsRedis(files, mutual) {
  const port = await freePort();
  const server = await startRedis([
    '--port', '0', '--tls-port', String(port),
    '--tls-cert-file', files.path('server.crt'), '--tls-key-file', files.path('server.key'),
    '--tls-ca-cert-file', files.path('ca.crt'), '--tls-auth-clients', mutual ? 'yes' : 'no',
  ], port);
  const cli = (args) => {
    const run = spawnSync('redis-cli', ['--tls', '--cacert', files.path('ca.crt'), '--cert', files.path('client.crt'), '--key', files.path('client.key'), '-p', String(port), ...args], { encoding: 'utf8' });
    if (run.error || run.status !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${run.error?.message ?? run.stderr}`);
    return run.stdout.trim();
  };
  return { ...server, url: `rediss://127.0.0.1:${port}/`, cli };
}

/** One redis-sentinel (quorum 1) watching `redis` as master `name`; `{ port, stop }`, once
 * it names the master's address. */
async function startSentinel(redis, name) {
  if (spawnSync('redis-sentinel', ['--version']).error) throw new Error('redis-sentinel is needed by this test: install it (Debian: `apt-get install redis-sentinel`)');
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluicegate-sentinel-'));
  const conf = path.join(dir, 'sentinel.conf');
  fs.writeFileSync(conf, `port ${port}\nbind 127.0.0.1\nprotected-mode no\ndir ${dir}\nsentinel monitor ${name} 127.0.0.1 ${redis.port} 1\n`);
  const child = spawn('redis-sentinel', [conf], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('error', () => {});
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(child.pid, 'SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    const reply = spawnSync('redis-cli', ['-p', String(port), 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name], { encoding: 'utf8' });
    if (reply.stdout?.includes(String(redis.port))) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`redis-sentinel on port ${port} did not name master ${name} within 10 s: ${reply.stdout}${reply.stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { port, stop };
}

module.exports = { makeTlsFiles, startTlsRedis, startSentinel };
