-- The anchored FixedWindow: at most `limit` admitted per window that starts at a key's first
-- request (algorithm/anchored_window.rs), `L` and the period rounded up to whole us, `len`.
--
-- Rule: a request of n at `now` is admitted iff the count of the key's window [s, s + len)
-- holding `now`, plus n, is at most `limit`. When no window holds `now` (none, or it ended),
-- a request of n > 0 starts one at s = now (a whole us); n = 0 starts nothing. A denial
-- writes nothing. A window starting later than now (a clock stepping back) holds now.
--
-- State, one string: the tag "A", then doubles s, the window's start (us), and its count.
--
-- Hit (recorded whatever the answer): the count saturates at `limit`, as in fixed_window.lua.
--
-- ScriptAnswer: remaining = limit - count; retry_after and (when the count is not 0)
-- reset_after: s + len - now. Exact: times stay below 2^52 us.
local function decide_anchored_window(v, now, n, mode, L, len)
  local floor, byte, pack, sunpack = math.floor, string.byte, struct.pack, struct.unpack
  local MAX_EXACT = 9007199254740992
  local s, count, before = now, 0, nil
  if v then
    local ss, c
    if #v == 17 and byte(v, 1) == 65 then
      ss, c = sunpack('>dd', v, 2)
    end
    if not ss or ss ~= floor(ss) or ss < 0 or ss >= MAX_EXACT or c ~= floor(c) or c < 0
        or c > L then
      return nil, { err = 'SGFOREIGN the key holds a value that is not a sluicegate '
        .. 'anchored FixedWindow state' }
    end
    -- As written: fresh when its window ends.
    if c > 0 then
      before = ss + len
      if now < ss + len then
        s, count = ss, c
      end
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

  local ends = s + len
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
    write = pack('>Bdd', 65, s, after)
  end
  return pack('>dddddd', allowed and 1 or 0, L - after, retry, reset, 0, retry1), allowed, write,
    ends, before
end
