-- sluicegate: shared by every script.
--
-- Time is whole microseconds since the UNIX epoch: Redis's TIME (ARGV '' asks for it), or the
-- client's clock. Lua has only doubles, exact to 2^53. Every integer a script computes stays
-- at or below 2^52 in magnitude (the client clamps times to 2^52 us, the year 2112, and the
-- limiter refuses quotas whose arithmetic would leave that range), so sums are exact, and so
-- is division: for integers |a| <= 2^52 and 0 < b <= 2^52, a true quotient that is not a
-- whole number lies at least 1/b from one, more than half the spacing of doubles there
-- (|a| + b <= 2^53), so floor(a / b) and ceil(a / b) of the rounded quotient are exact.
--
-- Speed: beyond the round trip, a script's own work is most of a decision's cost, and in
-- Redis's Lua every function defined or called per run counts, as does every local of the
-- chunk a function captures (an upvalue is allocated per run). So the scripts define few
-- functions, each taking the library functions it needs as locals of its own; keep
-- arithmetic inline; pack each string state as a one-letter tag followed by big-endian
-- doubles (struct.pack: one C call each way); receive an algorithm's parameters as one
-- argument of four doubles; and reply with one packed string rather than an array (Redis
-- converts a table reply element by element). Integer-valued Lua numbers passed to
-- redis.call are formatted exactly by Redis; string.format('%d') is used where a number is
-- part of a string.
--
-- Bounds every script uses: the largest backlog or debt a state records, in its algorithm's
-- units, MAX_DEBT = 2^51 = 2251799813685248; stored times and counters are below
-- MAX_EXACT = 2^53 = 9007199254740992, and anything larger is not ours.

-- Every algorithm below is one pure function of the state the entry script read for it (one
-- MGET for every string state of a call; the sliding log, a sorted set, reads its own key):
--   decide(v, now, n, mode, a, b, c, d) -> reply, allowed, write, fresh, before
-- v: the key's string, or false when there is none; a..d: the algorithm's parameters (see
-- its header). reply: the six numbers packed (allowed, remaining, retry_after_us,
-- reset_after_us, wait_us, and the retry_after_us of a single request); write: the new
-- string state, or nil when nothing changes; fresh: when the new state is fresh again (us,
-- the same clock as now); before: the same for v (nil when there is no state). The sliding
-- log's decide takes its key instead of v, and its write is a function that writes and
-- returns what undoing it takes. `mode` is 'h' for a hit, 'c' otherwise; nothing is written
-- here. On a value that is not the algorithm's state: nil and an error reply (SGFOREIGN).

-- Adding a rule (an algorithm, or a variant of one such as a fixed window anchored at a key's
-- first request): a decide function of the contract above, in a file of its own, with a state
-- tag of its own (so that no other rule's value is ever read as its state: SGFOREIGN); its
-- byte in `deciders` (scripts.rs's `deciding!`, algorithm.rs's letter, params.rs's four
-- parameters); `fresh` and `before` the instants the state itself says it is fresh again, so
-- that the TTL rule below keeps holding. entry.lua (reading, writing, batching, errors) needs
-- no change. Resetting a key needs no script: a DEL is atomic for a string state and a log
-- alike, and a missing key decides as a fresh state.

-- The TTL rule, the one place it is written (entry.lua for string states, sliding_log.lua for
-- the log). A key lives until its state is fresh again (a fresh state decides as no state),
-- rounded up to a whole second, and at least a second after the write (one of a few ms
-- would race the next request). Invariant: a key written by these scripts expires no
-- earlier than due(fresh) of the state it holds. So a write needs to move the expiry only
-- when due(fresh) of the new state is later than due(before) of the state the key held
-- when the script began; otherwise it keeps the TTL (SET ... KEEPTTL, no PEXPIRE), which
-- costs Redis a fraction of a SET ... PX. That holds on Redis's clock, which is also the
-- clock Redis expires keys by; with a client's clock (`own` false) every write sets the
-- expiry, as the client's time need not run at Redis's pace.
-- A TTL is at most 20 years (7305 days, 631152000000 ms): every quota's state is fresh
-- within twice the longest period (18.3 years), and a state the parameters would keep
-- longer (a debt of hits far beyond the limit) is dropped after 20 years rather than held
-- for as long as a client's parameters ask.
-- Returns the TTL in ms to set, or nil to keep the key's TTL.
local function expiry(fresh, before, now, own)
  local ceil = math.ceil
  local due = ceil(fresh / 1000000) * 1000000
  if own and before and due <= ceil(before / 1000000) * 1000000 then
    return nil
  end
  local ms = ceil((due - now) / 1000)
  if ms < 1000 then
    ms = 1000
  elseif ms > 631152000000 then
    ms = 631152000000
  end
  return ms
end
