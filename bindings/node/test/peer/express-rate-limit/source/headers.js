'use strict';
// express-rate-limit's internal header writers, which its headers test imports: none here
// (the headers are the Rust library's one writer's), so the tests calling them fail.
module.exports = {};
