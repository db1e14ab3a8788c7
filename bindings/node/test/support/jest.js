'use strict';
// Runs a peer library's own jest suite (copied under test/peer/) and returns each test's
// outcome: `Map<'file > test name', 'passed' | 'failed'>`.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');

/** Outcomes of the jest tests in `dir`: its files `*.js` but `ignore`, or as the
 * `jest.config.json` there says when `ignore` is null. */
function runJest(dir, ignore) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sluicegate-jest-')), 'results.json');
  const jest = require.resolve('jest/bin/jest', { paths: [root] });
  const select = ignore === null
    ? ['--config', path.join(dir, 'jest.config.json')]
    : ['--testMatch', '<rootDir>/*.js', '--testPathIgnorePatterns', ...ignore];
  const result = spawnSync(process.execPath, [
    jest, '--rootDir', dir, ...select, '--runInBand', '--json', '--outputFile', out, '--silent',
  ], { cwd: root, encoding: 'utf8', timeout: 170_000 });
  if (!fs.existsSync(out)) throw new Error(`jest wrote no results:\n${result.stdout}\n${result.stderr}`);
  const report = JSON.parse(fs.readFileSync(out, 'utf8'));
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  const outcomes = new Map();
  const messages = new Map();
  for (const file of report.testResults) {
    if (file.assertionResults.length === 0) throw new Error(`${file.name} did not run: ${file.message}`);
    for (const t of file.assertionResults) {
      const name = `${path.basename(file.name)} > ${t.fullName}`;
      outcomes.set(name, t.status);
      messages.set(name, (t.failureMessages ?? []).join('\n').split('\n').slice(0, 6).join('\n'));
    }
  }
  return { outcomes, messages };
}

module.exports = { runJest };
