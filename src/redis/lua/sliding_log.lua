-- SlidingLog: the exact sliding log, a sorted set of admitted requests.
--
-- Rule: a request of n at `now` is admitted iff fewer than limit - n + 1 admitted units were
-- logged in the trailing period; each admitted unit is logged, rejected requests never are.
-- So no trailing period ever holds more than `limit` admitted units, exactly.
--
-- Time: an entry logged at s (a whole us) counts while now < s + P, with P the period rounded
-- up to whole us: on Redis's microsecond timeline that is exactly "s + period > now".
--
-- State: a sorted set; one member per admitted unit, scored by its time in us. Members are
-- "s" followed by a 7-byte big-endian counter (one more than the newest member's), so
-- same-instant units get distinct members and the newest member, by score then bytes, holds
-- the newest counter. Times never go backwards in the log: a reading earlier than the newest
-- entry counts as the newest (at = max(now, newest)). Only the newest `limit` entries can ever
-- matter (they expire last), so every write keeps at most `limit` (dropping the oldest, the
-- expired ones first): a hit of n logs min(n, limit) units, and decisions stay exact. Live
-- entries are counted by score, so expired ones left behind change nothing.
--
-- ScriptAnswer: remaining = limit - live'; retry_after = until the entry blocking the request
-- expires; reset_after = until the newest entry expires.
--
-- Range: limit <= 65,536 (checked when the limiter is built: a write of n units costs
-- O(n log limit) inside Redis, which no other client can interleave).
local function log_member(c)
  return struct.pack('>BI7', 115, c)
end

-- The time of the j-th (from 0) oldest entry logged after `since`.
local function nth_live(key, since, j)
  local entry = redis.call('ZRANGE', key, string.format('(%d', since), '+inf', 'BYSCORE',
    'LIMIT', j, 1, 'WITHSCORES')
  return tonumber(entry[2])
end

-- `own`: now is Redis's clock (the TTL rule in prelude.lua).
local function decide_sliding_log(key, now, n, mode, L, P, _, _, own)
  local floor, fmt, byte, pack, sunpack = math.floor, string.format, string.byte, struct.pack,
    struct.unpack
  local MAX_EXACT = 9007199254740992
  local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  local at, counter, newest, live = now, -1, nil, 0
  if top[1] then
    local member = top[1]
    newest = tonumber(top[2])
    if #member ~= 8 or byte(member, 1) ~= 115 or not newest or newest ~= floor(newest)
        or newest < 0 or newest >= MAX_EXACT then
      return nil, { err = 'SGFOREIGN the key holds a value that is not a sluicegate '
        .. 'SlidingLog' }
    end
    counter = sunpack('>I7', member, 2)
    if newest > at then
      at = newest
    end
    live = redis.call('ZCOUNT', key, fmt('(%d', at - P), '+inf')
  end

  local allowed = n == 0 or (n <= L and live + n <= L)
  local over = not allowed and mode == 'h'
  local k = 0
  if n > 0 and (allowed or over) then
    k = math.min(n, L)
  end
  local after = math.min(live + k, L)
  local newest_after = newest
  if k > 0 then
    newest_after = at
  end
  local reset = 0
  if newest_after and after > 0 then
    reset = math.max(newest_after + P - now, 0)
  end
  local retry, retry1 = 0, 0
  if over then
    -- After the hit `limit` entries are live; the oldest of them blocks the next request.
    local survivors = math.min(live, L - k)
    local oldest = at
    if survivors > 0 then
      oldest = nth_live(key, at - P, live - survivors)
    end
    retry = oldest + P - now
    retry1 = retry
  elseif not allowed then
    retry = nth_live(key, at - P, live + n - L - 1) + P - now
    if live >= L then
      retry1 = nth_live(key, at - P, 0) + P - now
    end
  end

  local write = nil
  if k > 0 then
    write = function()
      local first = counter + 1
      if k == 1 then
        redis.call('ZADD', key, at, log_member(first))
      else
        local args = {}
        for c = first, first + k - 1 do
          args[#args + 1] = at
          args[#args + 1] = log_member(c)
          if #args >= 1000 then
            redis.call('ZADD', key, unpack(args))
            args = {}
          end
        end
        if #args > 0 then
          redis.call('ZADD', key, unpack(args))
        end
      end
      -- Members beyond the newest L: only once more than L were ever logged under this
      -- key's counter (it starts at 0 on a new key).
      if first + k > L then
        redis.call('ZREMRANGEBYRANK', key, 0, -(L + 1))
      end
      -- Fresh once the newest entry expires (the TTL rule in prelude.lua).
      local old
      if newest then
        old = newest + P
      end
      local ms = expiry(at + P, old, now, own)
      if ms then
        redis.call('PEXPIRE', key, ms)
      end
      return first, k, at
    end
  end
  return pack('>dddddd', allowed and 1 or 0, L - after, retry, reset, 0, retry1), allowed, write
end
