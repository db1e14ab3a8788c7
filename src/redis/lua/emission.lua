-- The theoretical-arrival-time core that gcra.lua and leaky_bucket.lua share.
--
-- Units: the emission interval T = period / limit is rarely a whole number of microseconds,
-- so durations are counted in units of 1/D us, with D = 1000 * limit / g and
-- g = gcd(period_ns, 1000 * limit): one request is then exactly T = period_ns / g units. The
-- client sends D, T, cap = burst * T and need = n * T (computed in u128; a hit's need capped
-- at 2^51).
--
-- State, one string: the tag, then doubles q and r: the theoretical arrival time
-- tat = q + r/D us since the UNIX epoch, 0 <= r < D. No key: tat in the past.
--
-- Rule, for a request of n at `now` (a whole us), with backlog = max(tat - now, 0) in units:
-- admitted iff backlog + n*T <= burst*T; then tat = max(tat, now) + n*T. A denial writes
-- nothing. Hit (recorded whatever the answer): tat = max(tat, now) + n*T, the backlog
-- saturating at 2^51 units (for ordinary quotas, decades), so debt is repaid at the rate.
--
-- ScriptAnswer: remaining = floor((cap - backlog') / T); reset_after = ceil(backlog' / D) us (the
-- first whole us at which tat has passed); retry_after = the first whole us at which the
-- backlog has drained to cap - n*T; a shaping request waits ceil(backlog / D) us for its slot.
--
-- Range: cap <= 2^51 units (checked when the limiter is built), backlog <= 2^51, so every
-- sum stays at or below 2^52, and tat = now + backlog/D stays below 2^53.
local function emission(v, now, n, mode, D, T, cap, need, tag, name, shaping)
  local floor, ceil, byte, pack, sunpack = math.floor, math.ceil, string.byte, struct.pack,
    struct.unpack
  local MAX_DEBT, MAX_EXACT = 2251799813685248, 9007199254740992
  local backlog, before = 0, nil
  if v then
    local q, r
    if #v == 17 and byte(v, 1) == tag then
      q, r = sunpack('>dd', v, 2)
    end
    if not q or q ~= floor(q) or q < 0 or q >= MAX_EXACT or r ~= floor(r) or r < 0 or r >= D then
      return nil, { err = 'SGFOREIGN the key holds a value that is not a sluicegate ' .. name
        .. ' state' }
    end
    before = q
    if r > 0 then
      before = q + 1
    end
    local ahead = q - now
    if ahead >= 0 then
      -- A clock stepping back far can only make the backlog larger: saturate, never wrap.
      if ahead > floor(MAX_DEBT / D) then
        backlog = MAX_DEBT
      else
        backlog = ahead * D + r
        if backlog > MAX_DEBT then
          backlog = MAX_DEBT
        end
      end
    end
  end

  local allowed, after, over = true, backlog, false
  if n > 0 then
    if backlog + need <= cap then
      after = backlog + need
    else
      allowed = false
      if mode == 'h' then
        over = true
        after = backlog + need
        if after > MAX_DEBT then
          after = MAX_DEBT
        end
      end
    end
  end

  local remaining = 0
  if after <= cap then
    remaining = floor((cap - after) / T)
  end
  local reset = ceil(after / D)
  local retry, retry1, wait = 0, 0, 0
  if over then
    -- The numbers of the next single request, after the hit.
    retry = ceil((after - (cap - T)) / D)
    retry1 = retry
  elseif not allowed then
    retry = ceil((backlog - (cap - need)) / D)
    if backlog > cap - T then
      retry1 = ceil((backlog - (cap - T)) / D)
    end
  elseif shaping and n > 0 then
    wait = ceil(backlog / D)
  end

  local write = nil
  if after ~= backlog then
    -- tat' = now + after / D us, as a whole part and a remainder.
    local q = floor(after / D)
    write = pack('>Bdd', tag, now + q, after - q * D)
  end
  return pack('>dddddd', allowed and 1 or 0, remaining, retry, reset, wait, retry1), allowed, write,
    now + reset, before
end
