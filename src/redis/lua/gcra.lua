-- Gcra: the generic cell rate algorithm, on the emission core (emission.lua: rule, units,
-- state, range). Tag "G". Parameters: D, T, cap = burst*T, need = n*T.
local function decide_gcra(v, now, n, mode, D, T, cap, need)
  return emission(v, now, n, mode, D, T, cap, need, 71, 'Gcra', false)
end
