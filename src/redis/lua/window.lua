-- Wall-clock-aligned windows, shared by fixed_window.lua and sliding_window.lua.
--
-- Windows are [w * period, (w + 1) * period) in UNIX time, as in process (a per-minute window
-- resets at :00). A period of P ns is d/m us, with g = gcd(1000, P), m = 1000 / g and
-- d = P / g (for a period of whole us, m = 1 and d = P in us); elapsed times within a window
-- are counted in units of g ns, so a window is exactly d units long. The client checks at
-- build time that (m + 1) * d <= 2^52, which keeps everything below exact.

-- The window holding `now` (a whole us), and the units of g ns elapsed in it: now * m = w * d + e.
local function window_of(now, m, d)
  local floor = math.floor
  local qa = floor(now / d)
  local ra = now - qa * d
  local s = floor(ra * m / d)
  return qa * m + s, ra * m - s * d
end

-- The first whole us at or after `x` units (of g ns) into window w: ceil((w * d + x) / m).
local function instant(w, x, m, d)
  local qw = math.floor(w / m)
  return qw * d + math.ceil(((w - qw * m) * d + x) / m)
end
