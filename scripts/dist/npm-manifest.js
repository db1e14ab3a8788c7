#!/usr/bin/env node
// Prints the package.json of the published `sluicegate` package, made from the checkout's
// (argv[2]): no scripts (no install script: it builds nothing where it is installed; the
// checkout's `prepare` builds with cargo), no devDependencies, and the platform packages
// given (argv[3..], e.g. linux-x64-gnu) as optionalDependencies at the same version, as
// napi-rs's `napi pre-publish` writes them; npm installs the one whose os, cpu and libc match.
'use strict';

const fs = require('node:fs');

const [file, ...platforms] = process.argv.slice(2);
const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
delete manifest.scripts;
delete manifest.devDependencies;
manifest.optionalDependencies = Object.fromEntries(
  platforms.map((platform) => [`${manifest.name}-${platform}`, manifest.version]),
);
process.stdout.write(`${JSON.stringify(manifest, null, 2)}\n`);
