-- Undoes a reservation of a string state: restores the value before it only if the key
-- still holds exactly what the reservation wrote (nothing was recorded since), keeping the
-- TTL, which is at least the restored state's freshness time.
--
-- KEYS[1]: the state. ARGV: the value before ('' when there was none), the value written.
-- Reply: 1 when undone, 0 when something was recorded since (the units stay consumed).
if redis.call('GET', KEYS[1]) ~= ARGV[2] then
  return 0
end
if ARGV[1] == '' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
end
return 1
