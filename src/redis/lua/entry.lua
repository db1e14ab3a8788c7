-- The one entry of every decision script: one call, alone or a batch of queued calls, each
-- call (a group) one limit or several decided all-or-nothing, in arrival order, exactly as
-- if each group ran alone. `deciders` (defined just above: the algorithms this script
-- carries, by letter) maps an algorithm's byte to its function (prelude.lua's contract).
--
-- KEYS: the call's distinct keys, the string states first (ARGV[1] of them), then the
-- sliding logs' sorted sets. ARGV[2]: every group, packed: per group '>BH' (op: 'c' check,
-- 'p' peek, 'h' hit, 'r' check returning what an undo needs; its member count), then per
-- member '>HBdddddd' (its key's index in KEYS, its algorithm's letter, now in us or -1 for
-- Redis's TIME, read once for the whole call, its cost n, and the algorithm's four
-- parameters, unused ones 0).
--
-- Reply: an array, one element per group: a string, each member's six packed numbers (the
-- group allowed when every member did); for an 'r' that wrote, an array of that string and
-- the undo data (the value before, '' when none, and the value written; for the log, the
-- first counter, the count and the time); or the error the group would have had alone.
-- Errors are caught per group (pcall) before that group writes anything, so one bad key
-- fails only its own call, naming the failing member of a group of several ("(limit k)").
--
-- Redis work per call: one MGET for every string state (and, when some key had no string,
-- one EXISTS to tell a missing key from one of another type); each decision only computes,
-- on the values in `vals`; each string key written is SET once at the end whatever number of
-- decisions changed it, keeping its TTL unless the TTL rule (prelude.lua) says it must move.
local sunpack, concat = struct.unpack, table.concat
local strings, blob = tonumber(ARGV[1]), ARGV[2]

-- Each string key's value: the string, false when none, or an error table for a key of
-- another type.
local vals = {}
if strings > 0 then
  local got = redis.call('MGET', unpack(KEYS, 1, strings))
  local missing
  for i = 1, strings do
    local v = got[i]
    vals[i] = v
    if not v then
      missing = missing or {}
      missing[#missing + 1] = KEYS[i]
    end
  end
  if missing and redis.call('EXISTS', unpack(missing)) > 0 then
    -- MGET answers nil for a key of another type: GET names the error.
    for i = 1, strings do
      if not vals[i] then
        local ok, err = pcall(redis.call, 'GET', KEYS[i])
        if not ok then
          vals[i] = { err = tostring(err) }
        end
      end
    end
  end
end

-- Per string key written: the fresh time of its last state and the instant of that write,
-- the fresh time of the state it held when the script began (`first`; nil: none), and
-- whether every write used Redis's clock.
local dirty, fresh_of, now_of, first, own_of, seen = {}, {}, {}, {}, {}, {}
local out, pos, server_now = {}, 1, nil
-- An error reply; in a group of several, naming the failing limit (from 1).
local function named(err, m, k)
  if m > 1 then
    err = err .. ' (limit ' .. k .. ')'
  end
  return { err = err }
end
-- Each member's reply, write (false: none), key, fresh time, instant and clock: reused by
-- every group (a table costs Redis an allocation), entries 1..m being this group's.
local replies, writes, at, fresh_at, nows, owns = {}, {}, {}, {}, {}, {}
while pos <= #blob do
  local op, m
  op, m, pos = sunpack('>BH', blob, pos)
  -- 104 'h', 112 'p', 114 'r'.
  local mode = 'c'
  if op == 104 then
    mode = 'h'
  end
  local all, failed = true, nil
  for k = 1, m do
    local ki, letter, now, n, a, b, c, d
    ki, letter, now, n, a, b, c, d, pos = sunpack('>HBdddddd', blob, pos)
    local own = now < 0
    if own then
      if server_now == nil then
        local time = redis.call('TIME')
        server_now = tonumber(time[1]) * 1000000 + tonumber(time[2])
      end
      now = server_now
    end
    if not failed then
      local decide = deciders[letter]
      -- An error names the failing limit in a group of several.
      if decide == nil then
        failed = named('SGSCRIPT unknown algorithm ' .. tostring(letter), m, k)
      elseif letter == 115 then
        -- The sliding log: its own sorted set, read and written by its decide.
        local ok, reply, allowed, write = pcall(decide, KEYS[ki], now, n, mode, a, b, c, d, own)
        if not ok then
          failed = named(tostring(reply), m, k)
        elseif reply == nil then
          failed = named(allowed.err, m, k)
        else
          all = all and allowed
          replies[k], writes[k] = reply, write or false
        end
      else
        local v = vals[ki]
        if type(v) == 'table' then
          failed = named(v.err, m, k)
        else
          -- Pure (it calls no Redis command), so no pcall: it fails only by returning nil.
          local reply, allowed, write, fresh, before = decide(v, now, n, mode, a, b, c, d)
          if reply == nil then
            failed = named(allowed.err, m, k)
          else
            if not seen[ki] then
              seen[ki], first[ki], own_of[ki] = true, before, true
            end
            all = all and allowed
            replies[k], writes[k] = reply, write or false
            at[k], fresh_at[k], nows[k], owns[k] = ki, fresh, now, own
          end
        end
      end
    end
  end
  if failed then
    out[#out + 1] = failed
  else
    local undo
    if op == 104 or ((op == 99 or op == 114) and all) then
      for k = 1, m do
        local write = writes[k]
        if type(write) == 'function' then
          local f, count, at = write()
          if op == 114 then
            undo = { f, count, at }
          end
        elseif write then
          local ki = at[k]
          if op == 114 then
            undo = { vals[ki] or '', write }
          end
          vals[ki], dirty[ki], fresh_of[ki], now_of[ki] = write, true, fresh_at[k], nows[k]
          own_of[ki] = own_of[ki] and owns[k]
        end
      end
    end
    local element = replies[1]
    if m > 1 then
      element = concat(replies, '', 1, m)
    end
    if undo then
      element = { element, undo[1], undo[2], undo[3] }
    end
    out[#out + 1] = element
  end
end

-- Each string key changed, written once (the TTL rule in prelude.lua).
for ki in pairs(dirty) do
  local ms = expiry(fresh_of[ki], first[ki], now_of[ki], own_of[ki])
  if ms then
    redis.call('SET', KEYS[ki], vals[ki], 'PX', ms)
  else
    redis.call('SET', KEYS[ki], vals[ki], 'KEEPTTL')
  end
end
return out
