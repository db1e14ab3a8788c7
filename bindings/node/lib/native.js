'use strict';
// Loads the native module, in napi-rs's layout: in a checkout, the module `napi build
// --platform` wrote beside this file (sluicegate.<platform>.node); installed from npm, the
// platform package `sluicegate-<platform>` npm chose by its os, cpu and libc. napi-rs's
// generated loader is not used: when the module is missing it blames an npm bug and lists
// WebAssembly fallbacks this package does not ship. Here the error names the one package to
// install, or says that none exists for this machine.

const fs = require('node:fs');
const path = require('node:path');
const manifest = require('../package.json');

const binaryName = 'sluicegate';

// glibc or musl: Node built against glibc reports its version; musl's does not.
function linuxLibc() {
  const header = process.report?.getReport?.()?.header;
  if (header) return header.glibcVersionRuntime ? 'gnu' : 'musl';
  try {
    return fs.readFileSync('/usr/bin/ldd', 'latin1').includes('musl') ? 'musl' : 'gnu';
  } catch {
    return 'gnu';
  }
}

/**
 * napi-rs's names for this machine, the usual one first: linux-x64-gnu, linux-arm64-musl,
 * darwin-arm64; on Windows win32-x64-msvc, then win32-x64-gnu (a module linked by MinGW, which
 * Node loads just as well).
 */
function platformNames() {
  const { platform, arch } = process;
  if (platform === 'linux') return [`linux-${arch}-${linuxLibc()}`];
  if (platform === 'win32') return [`win32-${arch}-msvc`, `win32-${arch}-gnu`];
  return [`${platform}-${arch}`];
}

// The platform packages published with this version, as the published package.json names
// them (optionalDependencies); none in a checkout.
function publishedPlatforms() {
  const prefix = `${manifest.name}-`;
  return Object.keys(manifest.optionalDependencies ?? {})
    .filter((name) => name.startsWith(prefix))
    .map((name) => name.slice(prefix.length));
}

function missing(platform) {
  const pkg = `${manifest.name}-${platform}`;
  const published = publishedPlatforms();
  let message;
  if (published.length === 0) {
    message = `sluicegate's native module for this machine (${platform}) is not built: run ` +
      `\`npm run build\` in ${path.dirname(__dirname)} (it needs Rust), or install ${pkg}@${manifest.version}`;
  } else if (!published.includes(platform)) {
    message = `sluicegate ${manifest.version} has no prebuilt native module for ${platform} ` +
      `(it ships ${published.join(', ')}); build it from source with Rust installed: ` +
      'npm install <a sluicegate checkout>/bindings/node';
  } else {
    message = `sluicegate's native module for this machine (${platform}) is not installed: ` +
      `run \`npm install ${pkg}@${manifest.version}\` (npm skips it when optional dependencies ` +
      'are omitted, or when the lockfile was made on another platform)';
  }
  const error = new Error(message);
  error.code = 'SLUICEGATE_NATIVE_MISSING';
  return error;
}

// The version of PKG that is installed, or null.
function installedVersion(pkg) {
  try {
    return require(`${pkg}/package.json`).version;
  } catch (error) {
    if (error.code === 'MODULE_NOT_FOUND') return null;
    throw error;
  }
}

function load() {
  const names = platformNames();
  for (const name of names) {
    const local = path.join(__dirname, `${binaryName}.${name}.node`);
    if (fs.existsSync(local)) return require(local);
  }
  const platform = names.find((name) => installedVersion(`${manifest.name}-${name}`) !== null);
  if (platform === undefined) throw missing(names[0]);
  const pkg = `${manifest.name}-${platform}`;
  const installed = installedVersion(pkg);
  if (installed !== manifest.version) {
    throw new Error(`sluicegate ${manifest.version} needs ${pkg}@${manifest.version}, ` +
      `but ${pkg}@${installed} is installed: run \`npm install ${pkg}@${manifest.version}\``);
  }
  try {
    return require(pkg);
  } catch (error) {
    throw new Error(`${pkg}@${installed} is installed but its native module did not load ` +
      `on this machine (${platform}): ${error.message}`, { cause: error });
  }
}

module.exports = load();
