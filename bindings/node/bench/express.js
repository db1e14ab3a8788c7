'use strict';
// An express hello world under wrk on 127.0.0.1: requests per second with sluicegate's
// rateLimit, with express-rate-limit (memory store) set up alike, and with no limiter
// (bench/express_app.js, each in its own process, started once). Rounds alternate the order;
// each limiter's requests/s is also taken as a ratio to no limiter's in the same round, and
// the report gives medians of both. Needs `wrk` (Debian: apt-get install wrk).
//
//   node bench/express.js [rounds] [seconds] [connections]

const { spawn, spawnSync } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');
const { median, machine } = require('./support');

const ROUNDS = Number(process.argv[2] || 7);
const SECONDS = Number(process.argv[3] || 5);
const CONNECTIONS = Number(process.argv[4] || 32);
const CASES = ['none', 'sluicegate', 'express-rate-limit'];

/** Starts one app; resolves with `{ url, stop }` once it listens. */
function start(which) {
  const child = spawn(process.execPath, [path.join(__dirname, 'express_app.js'), which], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${which} exited with ${code}`)));
    readline.createInterface({ input: child.stdout }).once('line', (line) => {
      resolve({ url: line.replace('listening on ', ''), stop: () => process.kill(child.pid, 'SIGTERM') });
    });
  });
}

/** Requests per second that wrk measured against `url` for `seconds`. */
function wrk(url, seconds) {
  const run = spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, `${url}/`], { encoding: 'utf8' });
  if (run.error) throw new Error(`wrk is needed (Debian: apt-get install wrk): ${run.error.message}`);
  const match = /Requests\/sec:\s+([\d.]+)/.exec(run.stdout);
  if (!match || /Non-2xx/.test(run.stdout)) throw new Error(`wrk against ${url}: ${run.stdout}${run.stderr}`);
  return Number(match[1]);
}

(async () => {
  console.log(`# express hello world under wrk (-t1 -c${CONNECTIONS}, ${SECONDS} s a run), ${ROUNDS} alternated rounds; ${machine()}`);
  const apps = {};
  for (const which of CASES) apps[which] = await start(which);
  try {
    for (const which of CASES) wrk(apps[which].url, 2); // warm up: JIT, connections
    const perSecond = Object.fromEntries(CASES.map((c) => [c, []]));
    const ratio = { sluicegate: [], 'express-rate-limit': [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? CASES : [...CASES].reverse();
      const got = {};
      for (const which of order) got[which] = wrk(apps[which].url, SECONDS);
      for (const which of CASES) perSecond[which].push(got[which]);
      for (const which of Object.keys(ratio)) ratio[which].push(got[which] / got.none);
      console.log(`  round ${round + 1}: ${CASES.map((c) => `${c} ${got[c].toFixed(0)}`).join(', ')} req/s`);
    }
    console.log('');
    for (const which of CASES) {
      const m = median(perSecond[which]);
      const line = `  ${which.padEnd(20)} ${m.toFixed(0).padStart(7)} req/s`;
      if (which === 'none') {
        console.log(line);
        continue;
      }
      const r = median(ratio[which]);
      const cost = 1e6 / m - 1e6 / median(perSecond.none);
      console.log(`${line}  ${r.toFixed(3)}x no limiter (median of rounds; ${((1 - r) * 100).toFixed(1)}% fewer), ~${cost.toFixed(1)} µs a request`);
    }
  } finally {
    for (const app of Object.values(apps)) app.stop();
  }
})();
