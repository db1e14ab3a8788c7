'use strict';
// express-rate-limit's types module: its tests import types alone from it.
module.exports = {};
