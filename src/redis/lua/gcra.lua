-- Gcra: the generic cell rate algorithm, on the emission core (emission.lua: rule, units,
-- state, range). Tag "G". Parameters: D, T, cap = burst*T, need = n*T.
local function decide_gcra(key, now, n, mode, params)
  return emission(key, now, n, mode, params, 71, 'Gcra', false)
end
