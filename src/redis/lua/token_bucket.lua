-- TokenBucket: a bucket of `burst` tokens refilled at limit/period, starting full.
--
-- Rule: a request of n is admitted iff the bucket holds at least n tokens; it then takes
-- them. Tokens accrue continuously up to `burst`. A denial writes nothing.
--
-- Units: tokens are counted in units of 1/E token and time in whole us, with
-- g = gcd(period_ns, 1000 * limit), E = period_ns / g and R = 1000 * limit / g: one us refills
-- exactly R units, so the refill is integer arithmetic and the bucket is exact (the packed
-- in-process TokenBucket lags an exact bucket by under one token; this one does not). The
-- client sends E, R, full = burst * E and need = n * E (a hit's need capped at 2^51).
--
-- State, one string: the tag "T", then doubles tokens (in units, negative while a hit's debt
-- is being repaid) and stamp (us since the UNIX epoch). No key: a full bucket.
--
-- Hit (recorded whatever the answer): the tokens go negative by what was missing, saturating
-- at -2^51 units, so debt is repaid at the refill rate.
--
-- ScriptAnswer: remaining = floor(tokens' / E); reset_after = ceil((full - tokens') / R) us;
-- retry_after = ceil((need - tokens) / R) us, the first whole us at which n tokens are there.
--
-- Range: full <= 2^51 units (checked when the limiter is built); tokens >= -2^51, so the
-- refill arithmetic stays below 2^53.
local function decide_token_bucket(v, now, n, mode, E, R, full, need)
  local floor, ceil, byte, pack, sunpack = math.floor, math.ceil, string.byte, struct.pack,
    struct.unpack
  local MAX_DEBT, MAX_EXACT = 2251799813685248, 9007199254740992
  local tokens, stamp, before = full, now, nil
  if v then
    local t, s
    if #v == 17 and byte(v, 1) == 84 then
      t, s = sunpack('>dd', v, 2)
    end
    if not t or t ~= floor(t) or t < -MAX_DEBT or t > full or s ~= floor(s) or s < 0
        or s >= MAX_EXACT then
      return nil, { err = 'SGFOREIGN the key holds a value that is not a sluicegate '
        .. 'TokenBucket state' }
    end
    -- Full again at s + ceil((full - t) / R).
    before = s
    if t < full then
      before = s + ceil((full - t) / R)
    end
    if now > s then
      local missing = full - t
      if missing > 0 and now - s < ceil(missing / R) then
        tokens = t + (now - s) * R
      end
    else
      -- A clock stepping back refills nothing and keeps the later stamp.
      tokens, stamp = t, s
    end
  end

  local allowed, after, over = true, tokens, false
  if n > 0 then
    if tokens >= need then
      after = tokens - need
    else
      allowed = false
      if mode == 'h' then
        over = true
        after = tokens - need
        if after < -MAX_DEBT then
          after = -MAX_DEBT
        end
      end
    end
  end

  local remaining = 0
  if after >= E then
    remaining = floor(after / E)
  end
  local reset = 0
  if after < full then
    reset = ceil((full - after) / R)
  end
  local retry, retry1 = 0, 0
  if over then
    retry = ceil((E - after) / R)
    retry1 = retry
  elseif not allowed then
    retry = ceil((need - tokens) / R)
    if tokens < E then
      retry1 = ceil((E - tokens) / R)
    end
  end

  local write = nil
  if after ~= tokens then
    write = pack('>Bdd', 84, after, stamp)
  end
  -- The new state holds `after` tokens at `stamp` (later than now when the clock stepped back).
  local fresh = stamp
  if after < full then
    fresh = stamp + ceil((full - after) / R)
  end
  return pack('>dddddd', allowed and 1 or 0, remaining, retry, reset, 0, retry1), allowed, write,
    fresh, before
end
