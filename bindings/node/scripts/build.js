#!/usr/bin/env node
// Builds the native module from source with cargo (release) and copies it beside the package
// as `sluicegate.<platform>.node`, the name lib/native.js loads. Run by `npm install` (the
// package's own `install` script) and by `npm run build`.
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { binaryName } = require('../lib/platform');

const root = path.resolve(__dirname, '..');
const cargo = process.env.CARGO || 'cargo';
const args = ['build', '--release', '-p', 'sluicegate-node', '--message-format=json-render-diagnostics'];

// cargo's JSON lines name the artifact wherever the target directory is (CARGO_TARGET_DIR,
// or the workspace's target/), so the build shares whatever the workspace already built.
const run = spawnSync(cargo, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 256 << 20 });
if (run.error) {
  console.error(`sluicegate: could not run ${cargo}: ${run.error.message}; install Rust (https://rustup.rs) to build the native module`);
  process.exit(1);
}
if (run.status !== 0) {
  console.error(`sluicegate: cargo ${args.join(' ')} failed with status ${run.status}`);
  process.exit(run.status || 1);
}

let library = null;
for (const line of run.stdout.toString().split('\n')) {
  if (!line.startsWith('{')) continue;
  const message = JSON.parse(line);
  if (message.reason === 'compiler-artifact' && message.target.name === 'sluicegate_node') {
    library = message.filenames.find((f) => /\.(so|dylib|dll)$/.test(f)) || library;
  }
}
if (!library) {
  console.error('sluicegate: cargo built no sluicegate_node library');
  process.exit(1);
}
const target = path.join(root, binaryName());
fs.copyFileSync(library, target);
console.log(`sluicegate: built ${path.relative(root, target)}`);
