'use strict';
// One process of the shared-limit test: sends COUNT requests to SERVER through a throttle
// whose limit lives on REDIS, tagging each with NAME, then exits.
//   node throttle_worker.js REDIS SERVER NAME COUNT QUOTA

const http = require('node:http');
const axios = require('axios');
const { throttle } = require('../..');

const [redis, server, name, count, quota] = process.argv.slice(2);
const api = throttle(axios.create({ baseURL: server, httpAgent: new http.Agent({ keepAlive: false }) }), { quota, redis });

Promise.all(Array.from({ length: Number(count) }, (_, i) => api.get(`/${name}/${i}`))).then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
