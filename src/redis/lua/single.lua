-- One limit, one key; `decide` is bound to the algorithm's function just above (see the
-- contract in prelude.lua).
--
-- KEYS[1]: the state. ARGV: op ('c' check, 'p' peek, 'h' hit, 'r' check returning what an
-- undo needs), now ('' for Redis's TIME), n, the algorithm's parameters (doubles).
-- Reply: the packed numbers; for an 'r' that wrote, an array of them and the undo data.
local op, key = ARGV[1], KEYS[1]
local now
if ARGV[2] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
else
  now = tonumber(ARGV[2])
end
local mode = 'c'
if op == 'h' then
  mode = 'h'
end
local reply, allowed, write, fresh, before = decide(key, now, tonumber(ARGV[3]), mode, ARGV[4])
if reply == nil then
  return allowed
end
if write == nil or op == 'p' then
  return reply
end
if type(write) == 'function' then
  if op == 'r' then
    return { reply, write() }
  end
  write()
  return reply
end
-- A TTL of the time until the state is fresh again, at least a second: a longer TTL never
-- changes a decision (a fresh state decides as no state), one of a few ms would race the
-- next request.
local ms = math.ceil(fresh / 1000)
if ms < 1000 then
  ms = 1000
end
redis.call('SET', key, write, 'PX', ms)
if op == 'r' then
  return { reply, before or '', write }
end
return reply
