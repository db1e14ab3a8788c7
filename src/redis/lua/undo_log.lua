-- Undoes a reservation on a sliding log: removes the members it added, those still there
-- with the score it gave them. Removing an admitted entry can never let any trailing period
-- hold more than the limit, so this is safe even after later admissions.
--
-- KEYS[1]: the log. ARGV: the first counter, how many, their time in us.
-- Reply: 1 when every member was removed, 0 otherwise.
local first, count, score = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local found = redis.call('ZRANGE', KEYS[1], score, score, 'BYSCORE')
local mine = {}
for c = first, first + count - 1 do
  mine[log_member(c)] = true
end
local removed, batch = 0, {}
for _, member in ipairs(found) do
  if mine[member] then
    batch[#batch + 1] = member
    if #batch >= 1000 then
      removed = removed + redis.call('ZREM', KEYS[1], unpack(batch))
      batch = {}
    end
  end
end
if #batch > 0 then
  removed = removed + redis.call('ZREM', KEYS[1], unpack(batch))
end
if removed == count then
  return 1
end
return 0
