'use strict';
// The name of a `rateLimit` shorthand on Redis given none (`rateLimit({ quota: '3/minute',
// redis })`): its key's name (`ip`), unless it runs on an express route, where it is named
// after the route, `POST /login` (the method and the route's path template, under its
// router's mount path), or under a router's mount path, `/api`. A limit's name is its
// counter's name on Redis (`sluicegate:http:<name>:`), so two unnamed limits of the same quota
// on two routes would otherwise count one client's requests on both routes together there,
// where in process each has its own table (and keeps the name `ip`, the contract's); with a
// name from its route, each route counts apart on Redis as in process, and every process
// serving the route shares its counter. The name is taken at the limit's first request, when
// the route is known.

/** The longest name the library takes. */
const MAX_NAME = 64;

/** The name `req`'s route gives a limit, or null when it runs on no route or mount path (app-wide). */
function routeName(req) {
  const route = req.route;
  const base = typeof req.baseUrl === 'string' ? req.baseUrl : '';
  let name = null;
  if (route && route.path !== undefined) {
    name = `${req.method} ${base}${pathText(route.path)}`;
  } else if (base !== '') {
    name = base;
  }
  return name === null ? null : bounded(name);
}

/** A route's path template as text (express takes strings, RegExps and arrays of them). */
function pathText(path) {
  return Array.isArray(path) ? path.map(pathText).join('|') : String(path);
}

/** `name` within the library's 64 characters: a longer one keeps its start and a hash of the whole. */
function bounded(name) {
  if (name.length <= MAX_NAME) return name;
  // FNV-1a over the UTF-16 code units: stable across processes, so every one names it alike.
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `${name.slice(0, MAX_NAME - 9)}~${hash.toString(16).padStart(8, '0')}`;
}

/** The options `o` (from `normalize`) with their limits renamed after `name`, which replaces `base`. */
function renamed(o, base, name) {
  const rename = (limitName) => name + limitName.slice(base.length);
  return {
    ...o,
    native: { ...o.native, limits: o.native.limits.map((l) => ({ ...l, name: rename(l.name) })) },
    names: o.names.map(rename),
    keyFunctions: o.keyFunctions && o.keyFunctions.map(([i, fn, n]) => [i, fn, rename(n)]),
  };
}

module.exports = { routeName, renamed };
