-- SlidingWindow: the sliding window counter, the previous window weighted by how much of it
-- still overlaps the trailing period (window.lua: alignment and units).
--
-- Rule: with prev and curr the counts of the previous and current windows and e the units
-- elapsed in the current one, a request of n is admitted iff, for its last unit,
-- prev * (d - e) + (curr + n - 1) * d < limit * d, i.e. prev * (d - e) < room * d with
-- room = limit - curr - n + 1 > 0: exactly the in-process rule, on Redis's microseconds.
-- A denial writes nothing.
--
-- State, one string: the tag "W", then doubles w (the window index), prev and curr. No key:
-- both windows empty.
--
-- Hit (recorded whatever the answer): the current count saturates at `limit`.
--
-- ScriptAnswer: remaining = ceil(headroom / d) with headroom = limit*d - prev*(d - e) - curr*d;
-- reset_after = the first whole us of the window after next (or of the next one when only
-- prev is left); retry_after = the first whole us at which the weight has faded enough, in
-- this window, the next, or at the latest the start of the one after.
--
-- Range: limit * d <= 2^52 and (m + 1) * d <= 2^52 (checked when the limiter is built): for
-- periods of whole seconds, limit x period in us up to 2^52 (per day up to 52,124, per hour
-- up to 1,250,999, per minute up to 75,059,993). Exact.

-- The least elapsed x in [0, d) at which a request of k fits in a window whose fading count
-- is `fading` and current count `current`, or nil if none does.
local function sliding_earliest(fading, current, k, L, d)
  local room = L - current - k + 1
  if room <= 0 then
    return nil
  end
  if fading == 0 then
    return 0
  end
  -- fading * (d - x) < room * d  <=>  x > d - room * d / fading
  local x = d - math.ceil(room * d / fading) + 1
  if x < 0 then
    return 0
  end
  if x >= d then
    return nil
  end
  return x
end

-- The first whole us at which a request of k is admitted if nothing else is recorded.
local function sliding_retry(w, prev, curr, k, now, L, m, d)
  local x = sliding_earliest(prev, curr, k, L, d)
  if x then
    local t = instant(w, x, m, d)
    if t < now then
      t = now
    end
    if t < instant(w + 1, 0, m, d) then
      return t
    end
  end
  x = sliding_earliest(curr, 0, k, L, d)
  if x then
    local t = instant(w + 1, x, m, d)
    if t < instant(w + 2, 0, m, d) then
      return t
    end
  end
  return instant(w + 2, 0, m, d)
end

local function decide_sliding_window(v, now, n, mode, L, m, d)
  local floor, ceil, byte, pack, sunpack = math.floor, math.ceil, string.byte, struct.pack,
    struct.unpack
  local MAX_EXACT = 9007199254740992
  local w, e = window_of(now, m, d)
  local prev, curr, before = 0, 0, nil
  if v then
    local sw, p, c
    if #v == 25 and byte(v, 1) == 87 then
      sw, p, c = sunpack('>ddd', v, 2)
    end
    if not sw or sw ~= floor(sw) or sw < 0 or sw >= MAX_EXACT or p ~= floor(p) or p < 0
        or p > L or c ~= floor(c) or c < 0 or c > L then
      return nil, { err = 'SGFOREIGN the key holds a value that is not a sluicegate '
        .. 'SlidingWindow state' }
    end
    -- As written: fresh when its current count has left the trailing period.
    if c > 0 then
      before = instant(sw + 2, 0, m, d)
    end
    if w == sw then
      prev, curr = p, c
    elseif w == sw + 1 then
      prev = c
    elseif w < sw then
      -- A clock stepping back counts as the start of the state's window, where the previous
      -- window weighs the most.
      w, e, prev, curr = sw, 0, p, c
    end
  end

  local room = L - curr - n + 1
  local allowed = n == 0 or (room > 0 and prev * (d - e) < room * d)
  local after, over = curr, false
  if n > 0 then
    if allowed then
      after = curr + n
    elseif mode == 'h' then
      over = true
      after = curr + n
      if after > L then
        after = L
      end
    end
  end

  local headroom = L * d - prev * (d - e) - after * d
  local remaining = 0
  if headroom > 0 then
    remaining = ceil(headroom / d)
  end
  local reset = 0
  if after > 0 then
    reset = instant(w + 2, 0, m, d) - now
  elseif prev > 0 then
    reset = instant(w + 1, 0, m, d) - now
  end
  local retry, retry1 = 0, 0
  if over then
    retry = sliding_retry(w, prev, after, 1, now, L, m, d) - now
    retry1 = retry
  elseif not allowed then
    retry = sliding_retry(w, prev, curr, n, now, L, m, d) - now
    if remaining == 0 then
      retry1 = sliding_retry(w, prev, curr, 1, now, L, m, d) - now
    end
  end

  local write = nil
  if after ~= curr then
    write = pack('>Bddd', 87, w, prev, after)
  end
  return pack('>dddddd', allowed and 1 or 0, remaining, retry, reset, 0, retry1), allowed, write,
    now + reset, before
end
