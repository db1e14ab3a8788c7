'use strict';
// axios-rate-limit's module shape over sluicegate: `rateLimit(axios, options)` hands the
// options to `throttle` unchanged, and `getLimiter(options)` is `throttle.getLimiter`. The
// suite's tests import this in place of axios-rate-limit.

const { throttle } = require('../../..');

module.exports = function axiosRateLimit(axios, options) {
  return throttle(axios, options);
};
module.exports.getLimiter = throttle.getLimiter;
