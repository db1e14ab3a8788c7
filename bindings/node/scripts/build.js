#!/usr/bin/env node
// Builds the native module from source with cargo, through @napi-rs/cli:
// `napi build --platform --release` into lib/, which writes the module as
// `lib/sluicegate.<platform>.node` and the raw module's types `lib/native.d.ts` (both generated,
// so git ignores them). The loader, lib/native.js, is ours, not napi-rs's generated one: it
// loads that file in a checkout, else the platform package `sluicegate-<platform>` an npm
// install brought, and names the package to install when neither is there.
// Run by `npm install` in this folder (the `prepare` script) and by `npm run build`; extra
// arguments go to `napi build` (scripts/dist.sh passes none). cargo builds into the
// workspace's target/, sharing what the Rust build left there.
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

function napiBin() {
  try {
    const manifest = require.resolve('@napi-rs/cli/package.json', { paths: [root] });
    return path.join(path.dirname(manifest), require(manifest).bin.napi);
  } catch {
    return null;
  }
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.error) {
    console.error(`sluicegate: could not run ${command}: ${result.error.message}`);
    process.exit(1);
  }
  if (result.status !== 0) process.exit(result.status || 1);
}

// `npm install <checkout>/bindings/node` from another project links this folder and runs this
// script here without installing our devDependencies: install the locked ones first (no
// scripts, so this one does not run again).
if (!napiBin()) {
  const npm = process.env.npm_execpath
    ? [process.execPath, [process.env.npm_execpath]]
    : ['npm', []];
  run(npm[0], [...npm[1], 'ci', '--ignore-scripts', '--no-audit', '--no-fund']);
}
const napi = napiBin();
if (!napi) {
  console.error('sluicegate: @napi-rs/cli is not installed; run `npm ci` in bindings/node');
  process.exit(1);
}
const cargo = spawnSync(process.env.CARGO || 'cargo', ['--version'], { stdio: 'ignore' });
if (cargo.error || cargo.status !== 0) {
  console.error('sluicegate: cargo not found: install Rust (https://rustup.rs) to build the native module, ' +
    'or install the prebuilt packages scripts/dist.sh writes to dist/ (see README.md)');
  process.exit(1);
}
run(process.execPath, [napi, 'build', '--platform', '--release', '--output-dir', 'lib',
  '--no-js', '--dts', 'native.d.ts', ...process.argv.slice(2)]);
