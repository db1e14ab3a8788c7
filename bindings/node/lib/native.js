'use strict';
// Loads the native module built for this platform by `npm install` (scripts/build.js).

const path = require('node:path');
const { binaryName } = require('./platform');

const file = path.join(__dirname, '..', binaryName());
let native;
try {
  native = require(file);
} catch (error) {
  throw new Error(
    `sluicegate: cannot load the native module ${file} (${error.message}); ` +
      'run `npm install` (or `npm run build`) in the package folder to build it with cargo',
    { cause: error },
  );
}

module.exports = native;
