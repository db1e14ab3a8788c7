-- LeakyBucket: a shaping queue drained at limit/period, on the emission core (emission.lua:
-- rule, units, state, range); tat is the next free departure slot, and an admitted request
-- is told to wait until its own slot: ceil(backlog / D) us. Tag "L". Parameters: D, T,
-- cap = burst*T, need = n*T.
local function decide_leaky_bucket(v, now, n, mode, D, T, cap, need)
  return emission(v, now, n, mode, D, T, cap, need, 76, 'LeakyBucket', true)
end
