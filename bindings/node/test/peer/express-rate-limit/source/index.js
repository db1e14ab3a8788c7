'use strict';
// express-rate-limit's module, as its tests import it (../../source/index.js), re-exporting
// sluicegate's `rateLimit` alone: its other exports (MemoryStore, ipKeyGenerator, ...) are
// express-rate-limit's own and have no counterpart here.

const { rateLimit } = require('../../../..');

module.exports = rateLimit;
module.exports.rateLimit = rateLimit;
module.exports.default = rateLimit;
