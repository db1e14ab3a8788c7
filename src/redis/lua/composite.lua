-- Several limits on one node, all-or-nothing, in one atomic call: every limit's decision is
-- computed before anything is written, and a check writes only if every limit admits.
--
-- KEYS: one state per limit (one hash slot in a cluster). ARGV: op ('c', 'p' or 'h'), then
-- four fields per limit: its algorithm ('g', 't', 'l', 'f', 'w', 's'), now ('' for Redis's
-- TIME, read once for all), its cost n, and its parameters (doubles).
-- Reply: one string, a double (1 when every limit allowed) then each limit's six numbers as
-- single.lua packs them.
local deciders = {
  g = decide_gcra,
  t = decide_token_bucket,
  l = decide_leaky_bucket,
  f = decide_fixed_window,
  w = decide_sliding_window,
  s = decide_sliding_log,
}
local op = ARGV[1]
local mode = 'c'
if op == 'h' then
  mode = 'h'
end
local replies, writes, fresh, all, server_now = {}, {}, {}, true, nil
for k = 1, #KEYS do
  local i = 2 + (k - 1) * 4
  local now
  if ARGV[i + 1] ~= '' then
    now = tonumber(ARGV[i + 1])
  else
    if server_now == nil then
      local time = redis.call('TIME')
      server_now = tonumber(time[1]) * 1000000 + tonumber(time[2])
    end
    now = server_now
  end
  local decide = deciders[ARGV[i]]
  if decide == nil then
    return { err = 'SGSCRIPT unknown algorithm ' .. tostring(ARGV[i]) }
  end
  -- Errors name the limit, so that the client can say which key holds what.
  local ok, reply, allowed, write, fresh_us = pcall(decide, KEYS[k], now, tonumber(ARGV[i + 2]), mode, ARGV[i + 3])
  if not ok then
    return { err = tostring(reply) .. ' (limit ' .. k .. ')' }
  end
  if reply == nil then
    return { err = allowed.err .. ' (limit ' .. k .. ')' }
  end
  all = all and allowed
  replies[k], writes[k], fresh[k] = reply, write or false, fresh_us
end
if op == 'h' or (op == 'c' and all) then
  for k = 1, #KEYS do
    local write = writes[k]
    if type(write) == 'function' then
      write()
    elseif write then
      local ms = math.ceil(fresh[k] / 1000)
      if ms < 1000 then
        ms = 1000
      end
      redis.call('SET', KEYS[k], write, 'PX', ms)
    end
  end
end
return struct.pack('>d', all and 1 or 0) .. table.concat(replies)
