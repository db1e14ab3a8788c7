'use strict';
// express-rate-limit's `skipFailedRequests`, `skipSuccessfulRequests` and
// `requestWasSuccessful`, on the library's refunds: a request is decided with reservations
// (the library's `decide_reserving`), and when it passes it keeps a handle that gives its cost
// back, exactly or not at all (the library's undo, README "Counting only some responses").
// Only the response's end is judged here, on express-rate-limit's events: 'finish' asks
// `requestWasSuccessful` (default: status below 400), a 'close' before the response ended
// (the client went away) and an 'error' are failures. A request is given back at most once,
// whatever events come (the native handle gives back once too).

const { httpRefund } = require('./native');

/**
 * `null` when neither option is on; else `watch(req, res)`, to call as a request arrives (so
 * that a client leaving while its decision is pending still counts as a failure), which
 * returns `keep(refund)`: to call with the refund handle of a request that passed. Only such
 * a request is judged (`requestWasSuccessful` is not called for skipped or refused ones,
 * which hold nothing to give back).
 */
function refunding({ skipFailedRequests, skipSuccessfulRequests, requestWasSuccessful }) {
  if (!skipFailedRequests && !skipSuccessfulRequests) return null;
  return function watch(req, res) {
    let handle = null; // the refund, until it is given back
    let finished = false;
    let failed = false;
    const giveBack = () => {
      if (handle === null) return;
      const given = handle;
      handle = null;
      refund(given);
    };
    const judged = () => judge(requestWasSuccessful, req, res, (ok) => {
      if (ok ? skipSuccessfulRequests : skipFailedRequests) giveBack();
    });
    res.once('finish', () => {
      finished = true;
      if (handle !== null) judged();
    });
    if (skipFailedRequests) {
      const fail = () => {
        failed = true;
        giveBack();
      };
      res.once('close', () => {
        if (!res.writableEnded) fail();
      });
      res.once('error', fail);
    }
    return function keep(refundHandle) {
      handle = refundHandle;
      if (failed) giveBack();
      else if (finished) judged();
    };
  };
}

/** Calls `then` with whether the user's `requestWasSuccessful` (sync or async) says so. One
 * that throws or rejects gives nothing back, and says so in a process warning. */
function judge(requestWasSuccessful, req, res, then) {
  let ok;
  try {
    ok = requestWasSuccessful(req, res);
  } catch (error) {
    return warn(error);
  }
  if (ok && typeof ok.then === 'function') ok.then((value) => then(Boolean(value)), warn);
  else then(Boolean(ok));
}

function warn(error) {
  process.emitWarning(`rateLimit: requestWasSuccessful failed, so the request stays counted: ${error?.message ?? error}`, {
    code: 'SLUICEGATE_REQUEST_WAS_SUCCESSFUL',
  });
}

/** Gives a request back. A Redis that cannot answer keeps it counted (erring toward
 * counting, as an undo that cannot be exact does). */
function refund(handle) {
  const given = httpRefund(handle);
  if (given && typeof given.then === 'function') given.catch(() => {});
}

module.exports = { refunding };
