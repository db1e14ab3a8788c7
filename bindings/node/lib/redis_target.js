'use strict';
// Where Redis is, as every Redis option of the package takes it: a URL string, or an object
// `{ url, caCert, clientCert, clientKey, sentinelUsername, sentinelPassword }` (the service's
// --redis-ca-cert..., Python's ca_cert...). A certificate or key is a PEM file's path, the PEM
// itself, or a Buffer of it (what `fs.readFileSync` gives ioredis users), passed on as text:
// the library reads and checks each one, and names the option when one is wrong.

const { describe, knownOptions } = require('./args');

/** The PEM options, whose values may also be Buffers. */
const PEM = ['caCert', 'clientCert', 'clientKey'];
const SENTINEL = ['sentinelUsername', 'sentinelPassword'];
/** The fields of the object form. */
const FIELDS = ['url', ...PEM, ...SENTINEL];

/**
 * The native form of `value` (`{ url, caCert?, ... }`), given under the option `name` of
 * `what`; `undefined` when `value` is.
 */
function redisTarget(value, name, what) {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return { url: value };
  if (value === null || typeof value !== 'object' || Array.isArray(value) || Buffer.isBuffer(value)) {
    throw new TypeError(`${what}: \`${name}\` must be a URL string such as 'redis://127.0.0.1:6379/' or an object { url, caCert, clientCert, clientKey, sentinelUsername, sentinelPassword }, got ${describe(value)}`);
  }
  knownOptions(value, FIELDS, `${what}: \`${name}\``);
  return redisFields(value, (field) => `${name}.${field}`, what);
}

/** The fields of the object form, checked for their types only, with Buffers as text. */
function redisFields(value, label, what) {
  if (typeof value.url !== 'string') {
    throw new TypeError(`${what}: \`${label('url')}\` must be a string such as 'redis://127.0.0.1:6379/', got ${describe(value.url)}`);
  }
  const target = { url: value.url };
  for (const field of PEM) {
    const given = value[field];
    if (given === undefined) continue;
    if (given instanceof Uint8Array) target[field] = Buffer.from(given.buffer, given.byteOffset, given.byteLength).toString('utf8');
    else if (typeof given === 'string') target[field] = given;
    else throw new TypeError(`${what}: \`${label(field)}\` must be a PEM file's path, the PEM text or a Buffer of it, got ${describe(given)}`);
  }
  for (const field of SENTINEL) {
    const given = value[field];
    if (given === undefined) continue;
    if (typeof given !== 'string') throw new TypeError(`${what}: \`${label(field)}\` must be a string, got ${describe(given)}`);
    target[field] = given;
  }
  return target;
}

module.exports = { redisTarget, redisFields, FIELDS };
