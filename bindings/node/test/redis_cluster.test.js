'use strict';
// RedisLimiter on a real Redis Cluster (three redis-server nodes started by the test): keys
// spread over the nodes' slots, each decided on its own node, one limit per key.

const test = require('node:test');
const assert = require('node:assert/strict');
const { RedisLimiter } = require('..');
const { startCluster } = require('./support/redis');

let cluster;
test.before(async () => {
  cluster = await startCluster(3);
});
test.after(async () => {
  await cluster?.stop();
});

test('a limit per key on a Redis Cluster, every algorithm', async () => {
  for (const algorithm of ['gcra', 'token-bucket', 'leaky-bucket', 'fixed-window', 'sliding-window', 'sliding-log']) {
    const limiter = await RedisLimiter.connect({ quota: '2/minute', algorithm, url: cluster.urls, cluster: true, prefix: `cluster:${algorithm}:` });
    try {
      // 30 keys land on all three nodes' slots.
      for (let k = 0; k < 30; k++) {
        const key = `user:${k}`;
        assert.equal((await limiter.check(key)).allowed, true, `${algorithm} ${key}: 1st`);
        assert.equal((await limiter.check(key)).remaining, 0, `${algorithm} ${key}: 2nd`);
        assert.equal((await limiter.check(key)).allowed, false, `${algorithm} ${key}: 3rd is denied`);
      }
    } finally {
      await limiter.close();
    }
  }
});

test('two limiters on the cluster with the same settings are one limit', async () => {
  const options = { quota: '1/minute', url: cluster.urls, cluster: true, prefix: 'cluster:shared:' };
  const [a, b] = [await RedisLimiter.connect(options), await RedisLimiter.connect(options)];
  try {
    assert.equal((await a.check('k')).allowed, true);
    assert.equal((await b.check('k')).allowed, false);
  } finally {
    await a.close();
    await b.close();
  }
});
