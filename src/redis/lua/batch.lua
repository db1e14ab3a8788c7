-- Queued calls to one node in one atomic call: each group is decided in order exactly as
-- single.lua (one member) or composite.lua (several) would decide it alone, so a batch saves
-- round trips and per-script overhead without changing any answer.
--
-- KEYS: every member's state, group after group (one hash slot in a cluster). ARGV: per
-- group, its op ('c', 'p' or 'h') and its member count m, then composite.lua's four fields
-- per member: algorithm, now ('' for Redis's TIME, read once for the whole batch), n and
-- the parameters.
-- Reply: an array, one element per group: composite.lua's packed string (a flag, then six
-- numbers per member), or the error the group would have had alone. Errors are caught per
-- group (pcall) before that group writes anything, so one bad key fails only its own call.
local deciders = {
  g = decide_gcra,
  t = decide_token_bucket,
  l = decide_leaky_bucket,
  f = decide_fixed_window,
  w = decide_sliding_window,
  s = decide_sliding_log,
}
local pack, concat, ceil = struct.pack, table.concat, math.ceil
local out, i, base, server_now = {}, 1, 0, nil
while i <= #ARGV do
  local op, m = ARGV[i], tonumber(ARGV[i + 1])
  i = i + 2
  local mode = 'c'
  if op == 'h' then
    mode = 'h'
  end
  -- Each member's decision (or the group's error), then the writes: decided first, written
  -- only when the whole group may write.
  local replies, writes, fresh, all, failed = nil, nil, nil, true, nil
  local one_reply, one_write, one_fresh
  if m > 1 then
    -- Tables only for groups: each costs Redis an allocation, and most calls are one limit.
    replies, writes, fresh = {}, {}, {}
  end
  for k = 1, m do
    local a = i + (k - 1) * 4
    local now
    if ARGV[a + 1] ~= '' then
      now = tonumber(ARGV[a + 1])
    else
      if server_now == nil then
        local time = redis.call('TIME')
        server_now = tonumber(time[1]) * 1000000 + tonumber(time[2])
      end
      now = server_now
    end
    -- A group of several names its failing limit, as composite.lua does.
    local where = ''
    if m > 1 then
      where = ' (limit ' .. k .. ')'
    end
    local decide = deciders[ARGV[a]]
    if decide == nil then
      failed = { err = 'SGSCRIPT unknown algorithm ' .. tostring(ARGV[a]) .. where }
      break
    end
    local ok, reply, allowed, write, fresh_us = pcall(decide, KEYS[base + k], now,
      tonumber(ARGV[a + 2]), mode, ARGV[a + 3])
    if not ok then
      failed = { err = tostring(reply) .. where }
      break
    end
    if reply == nil then
      failed = { err = allowed.err .. where }
      break
    end
    all = all and allowed
    if m == 1 then
      one_reply, one_write, one_fresh = reply, write, fresh_us
    else
      replies[k], writes[k], fresh[k] = reply, write or false, fresh_us
    end
  end
  if failed then
    out[#out + 1] = failed
  else
    if op == 'h' or (op == 'c' and all) then
      for k = 1, m do
        local write, fresh_us = one_write, one_fresh
        if m > 1 then
          write, fresh_us = writes[k], fresh[k]
        end
        if type(write) == 'function' then
          write()
        elseif write then
          local ms = ceil(fresh_us / 1000)
          if ms < 1000 then
            ms = 1000
          end
          redis.call('SET', KEYS[base + k], write, 'PX', ms)
        end
      end
    end
    if m == 1 then
      out[#out + 1] = pack('>d', all and 1 or 0) .. one_reply
    else
      out[#out + 1] = pack('>d', all and 1 or 0) .. concat(replies)
    end
  end
  i = i + 4 * m
  base = base + m
end
return out
