#!/usr/bin/env python3
"""Redis CPU per decision inside the decision scripts, by algorithm and workload, without the
network: each measured EVAL runs the whole script (its chunk, as Redis runs it per call) REPS
times over one call of GROUPS queued groups, with the call's KEYS and ARGV built from strings
made once (Redis makes them per call from the command). CPU is redis-server's own
(INFO cpu: used_cpu_user + used_cpu_sys, getrusage), the least of TRIES runs, divided by the
decisions (members) decided; so it is steady on a loaded machine, unlike wall time.

  python3 benches/redis_lua.py src/redis/lua [9c72927]

The first argument: the scripts to measure (entry.lua's protocol); the second, optional: the
scripts before issue 33 (batch.lua's protocol), a directory or a git revision (9c72927 is
the last commit with them), measured the same way, each row alternating before and after.
Starts its own redis-server on a free loopback port and stops it.
"""
import os, socket, subprocess, sys, time

NEW, OLD = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
if OLD and not os.path.isdir(OLD):
    # A git revision: its scripts, into a temporary directory.
    import tempfile
    rev, OLD = OLD, tempfile.mkdtemp(prefix="sluicegate-lua-")
    for name in ("prelude", "emission", "gcra", "leaky_bucket", "token_bucket", "window",
                 "fixed_window", "sliding_window", "sliding_log", "batch"):
        text = subprocess.run(["git", "show", f"{rev}:src/redis/lua/{name}.lua"],
                              capture_output=True, text=True, check=True).stdout
        open(os.path.join(OLD, name + ".lua"), "w").write(text)
GROUPS, REPS, TRIES = 64, int(os.environ.get("REPS", "60")), int(os.environ.get("TRIES", "5"))

s = socket.socket(); s.bind(("127.0.0.1", 0)); PORT = s.getsockname()[1]; s.close()
server = subprocess.Popen(["redis-server", "--port", str(PORT), "--bind", "127.0.0.1", "--save", "",
                           "--appendonly", "no"], stdout=subprocess.DEVNULL)
def cli(*args, stdin=None):
    return subprocess.run(["redis-cli", "-p", str(PORT)] + list(args), capture_output=True,
                          text=True, input=stdin).stdout
for _ in range(100):
    if cli("PING").strip() == "PONG": break
    time.sleep(0.05)

# Parameters per algorithm (quota 100000/s, burst 100000; the log 1000/s), as params.rs makes them.
ALGOS = {
    "gcra": (103, "g", ["emission.lua", "gcra.lua"], "decide_gcra", (1, 10000, 1e9, 10000)),
    "token_bucket": (116, "t", ["token_bucket.lua"], "decide_token_bucket", (10000, 1, 1e9, 10000)),
    "leaky_bucket": (108, "l", ["emission.lua", "leaky_bucket.lua"], "decide_leaky_bucket", (1, 10000, 1e9, 10000)),
    "fixed_window": (102, "f", ["window.lua", "fixed_window.lua"], "decide_fixed_window", (100000, 1, 1e6, 0)),
    "sliding_window": (119, "w", ["window.lua", "sliding_window.lua"], "decide_sliding_window", (100000, 1, 1e6, 0)),
    "sliding_log": (115, "s", ["sliding_log.lua"], "decide_sliding_log", (1000, 1e6, 0, 0)),
}

def read(d, names):
    return "\n".join(open(os.path.join(d, n)).read() for n in names)

def keys_lua(mode, members):
    # Per rep r and group g, member j: its key name, as a Lua expression.
    if mode == "hot":
        return "'sluicegate:{hot' .. j .. '}x'"
    if mode == "1000":
        return "'sluicegate:{v' .. ((r * 64 + g * 7) % 1000) .. ':' .. j .. '}x'"
    return "'sluicegate:{n' .. T0 .. ':' .. r .. ':' .. g .. ':' .. j .. '}x'"  # never seen

def script(version, algo, mode, members):
    byte, letter, files, decide, p = ALGOS[algo]
    if version == "new":
        body = read(NEW, ["prelude.lua"] + files) + f"\nlocal deciders = {{[{byte}] = {decide}}}\n" + read(NEW, ["entry.lua"])
    else:
        body = read(OLD, ["prelude.lua"] + files) + f"\nlocal {decide} = {decide}\n"
        # batch.lua's deciders table names all six: stand-ins for the others.
        for other in ("decide_gcra", "decide_token_bucket", "decide_leaky_bucket", "decide_fixed_window",
                      "decide_sliding_window", "decide_sliding_log"):
            if other != decide:
                body += f"local {other} = nil\n"
        body += read(OLD, ["batch.lua"])
    build = f"""
local T0 = ARGV[1]
local calls = {{}}
for r = 1, {REPS} do
  local keys, argv, seen, strings, logs = {{}}, {{}}, {{}}, {{}}, {{}}
  local parts = {{}}
  for g = 1, {GROUPS} do
    if '{version}' == 'old' then
      argv[#argv + 1] = 'c'; argv[#argv + 1] = '{members}'
    else
      parts[#parts + 1] = struct.pack('>BH', 99, {members})
    end
    for j = 1, {members} do
      local key = {keys_lua(mode, members)}
      if '{version}' == 'old' then
        keys[#keys + 1] = key
        argv[#argv + 1] = '{letter}'; argv[#argv + 1] = ''; argv[#argv + 1] = '1'
        argv[#argv + 1] = struct.pack('>dddd', {p[0]}, {p[1]}, {p[2]}, {p[3]})
      else
        local ki = seen[key]
        if not ki then
          if {byte} == 115 then logs[#logs + 1] = key else strings[#strings + 1] = key end
          ki = key
          seen[key] = true
        end
        parts[#parts + 1] = key
      end
    end
  end
  if '{version}' == 'new' then
    -- Distinct keys, strings first, then the packed groups with their indexes.
    local index = {{}}
    for i, k in ipairs(strings) do keys[#keys + 1] = k; index[k] = #keys end
    for i, k in ipairs(logs) do keys[#keys + 1] = k; index[k] = #keys end
    local blob = {{}}
    for _, part in ipairs(parts) do
      if index[part] then
        blob[#blob + 1] = struct.pack('>HBdddddd', index[part], {byte}, -1, 1, {p[0]}, {p[1]}, {p[2]}, {p[3]})
      else
        blob[#blob + 1] = part
      end
    end
    argv = {{tostring(#strings), table.concat(blob)}}
  end
  calls[r] = {{keys, argv}}
end
return calls
"""
    return build, body

def measure(version, algo, mode, members):
    build, body = script(version, algo, mode, members)
    # One EVAL builds the calls and runs the script on each: the build is timed apart.
    runner = ("local function run(KEYS, ARGV)\n" + body + "\nend\n"
              "local function calls_of(ARGV)\n" + build + "\nend\n"
              "local calls = calls_of({ARGV[1]})\n"
              "if ARGV[2] == 'run' then for r = 1, #calls do run(calls[r][1], calls[r][2]) end end\n"
              "return 1\n")
    def cpu():
        info = cli("INFO", "cpu")
        return sum(float(l.split(":")[1]) for l in info.splitlines() if l.startswith(("used_cpu_user:", "used_cpu_sys:")))
    best = None
    for t in range(TRIES):
        tag = f"{version}{time.time_ns()}"
        if mode != "new":
            # Warm: the keys exist (as in a steady state), so the run measures writes to them.
            cli("EVAL", runner, "0", tag, "run")
        a = cpu(); cli("EVAL", runner, "0", tag, "build"); b = cpu()
        tag2 = tag if mode != "new" else tag + "x"
        c = cpu(); out = cli("EVAL", runner, "0", tag2, "run"); d = cpu()
        if out.strip() != "1":
            sys.exit(f"{version} {algo} {mode} {members}: {out}")
        us = ((d - c) - (b - a)) * 1e6 / (REPS * GROUPS * members)
        best = us if best is None else min(best, us)
        cli("FLUSHALL")
    return best

try:
    print(f"Redis CPU µs per decision inside the scripts ({GROUPS} groups a call, least of {TRIES} runs of {REPS} calls)\n")
    head = "| algorithm | workload | members a group | " + ("before | after | after / before |" if OLD else "after |")
    print(head)
    print("|---|---|--:|" + ("--:|--:|--:|" if OLD else "--:|"))
    for algo in ALGOS:
        for mode, members in (("hot", 1), ("1000", 1), ("new", 1), ("hot", 3), ("1000", 3)):
            after = measure("new", algo, mode, members)
            row = f"| {algo} | {dict(hot='one hot key', new='new keys (1M)').get(mode, '1,000 keys')} | {members} | "
            if OLD:
                before = measure("old", algo, mode, members)
                row += f"{before:.2f} | {after:.2f} | {after / before:.2f} |"
            else:
                row += f"{after:.2f} |"
            print(row, flush=True)
finally:
    server.terminate(); server.wait()
