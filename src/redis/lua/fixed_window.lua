-- FixedWindow: at most `limit` admitted per wall-clock-aligned window of `period`
-- (window.lua: alignment and units).
--
-- Rule: a request of n is admitted iff the window's count plus n is at most `limit`; the
-- count starts at 0 in each new window. A denial writes nothing.
--
-- State, one string: the tag "F", then doubles w, the window index (UNIX time / period),
-- and the count admitted in it. An index later than now's (a clock stepping back) counts as
-- now's window. No key: an empty window.
--
-- Hit (recorded whatever the answer): the count saturates at `limit`; a full window denies
-- everything until it ends, so nothing is lost and hits stay exact.
--
-- ScriptAnswer: remaining = limit - count; retry_after and (when the count is not 0) reset_after:
-- the first whole us of the next window. Exact integer arithmetic, any limit.
local function decide_fixed_window(v, now, n, mode, L, m, d)
  local floor, byte, pack, sunpack = math.floor, string.byte, struct.pack, struct.unpack
  local MAX_EXACT = 9007199254740992
  local w = window_of(now, m, d)
  local count, before = 0, nil
  if v then
    local sw, c
    if #v == 17 and byte(v, 1) == 70 then
      sw, c = sunpack('>dd', v, 2)
    end
    if not sw or sw ~= floor(sw) or sw < 0 or sw >= MAX_EXACT or c ~= floor(c) or c < 0
        or c > L then
      return nil, { err = 'SGFOREIGN the key holds a value that is not a sluicegate '
        .. 'FixedWindow state' }
    end
    -- As written: fresh when its window ends.
    if c > 0 then
      before = instant(sw + 1, 0, m, d)
    end
    if sw >= w then
      w, count = sw, c
    end
  end

  local allowed, after = true, count
  if n > 0 and count + n > L then
    allowed = false
    if mode == 'h' then
      after = L
    end
  elseif n > 0 then
    after = count + n
  end

  local ends = instant(w + 1, 0, m, d)
  local window_end = ends - now
  local reset = 0
  if after > 0 then
    reset = window_end
  end
  local retry, retry1 = 0, 0
  if not allowed then
    retry = window_end
    if after >= L then
      retry1 = window_end
    end
  end

  local write = nil
  if after ~= count then
    write = pack('>Bdd', 70, w, after)
  end
  return pack('>dddddd', allowed and 1 or 0, L - after, retry, reset, 0, retry1), allowed, write,
    ends, before
end
