'use strict';
// Runs a peer library's own node:test suite (copied under test/peer/) as its authors run it,
// `node --test` on its files in a child process, and returns each top-level test's outcome:
// `Map<'file > test name', 'passed' | 'failed' | 'skipped'>`, and the first lines of each
// failure's message (test/support/node_test_reporter.mjs writes them).

const { spawnSync } = require('node:child_process');
const path = require('node:path');

/** Outcomes of `files` (paths), named relative to `root`, where the tests run. */
function runNodeTests(files, root) {
  const reporter = path.join(__dirname, 'node_test_reporter.mjs');
  // Run as a top-level `node --test`, not as a child of the test file calling this.
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const result = spawnSync(process.execPath, ['--test', `--test-reporter=${reporter}`, ...files], {
    cwd: root, env, encoding: 'utf8', timeout: 170_000, maxBuffer: 64 << 20,
  });
  const lines = (result.stdout ?? '').split('\n').filter((line) => line.startsWith('['));
  if (lines.length === 0) throw new Error(`node --test reported nothing (${result.status}):\n${result.stderr}`);
  const outcomes = new Map();
  const messages = new Map();
  for (const line of lines) {
    const [file, name, status, message] = JSON.parse(line);
    const id = `${path.relative(root, file)} > ${name}`;
    outcomes.set(id, status);
    messages.set(id, message);
  }
  return { outcomes, messages };
}

module.exports = { runNodeTests };
