#!/usr/bin/env python3
"""How far the fixed window's Redis CPU per decision could fall, by changing how the script
runs rather than what it decides (BENCHMARKS.md, "Issue 33"). Over one connection, 4 calls
pipelined, each call GROUPS queued calls on one key (1,000 keys in turn), Redis's clock:

  script    the decision script as the library runs it (entry.lua over fixed_window.lua), EVALSHA
  function  the same code loaded once as a Redis Function (FUNCTION LOAD) and run by FCALL:
            Redis runs a script's whole chunk per call, a function's library once at load
  lean      a fixed window written for this one case alone: one key, its state decoded once
            and encoded once per call, no helper calls, one unpack per group; a floor for the
            interpreted work, not a script the library could ship (one algorithm, one key)

CPU is redis-server's own (INFO cpu, getrusage) per decision, the median of TRIES runs of N
calls, the variants alternated. Starts its own redis-server on a free loopback port and
stops it.

  python3 benches/redis_script_floor.py
"""
import os, socket, struct, subprocess, time

LUA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "redis", "lua")
N, TRIES = int(os.environ.get("N", "5000")), int(os.environ.get("TRIES", "5"))
# 100,000,000 a second: never denies; m = 1, d = 1,000,000 us (params.rs's FixedWindow).
PARAMS = (100_000_000, 1, 1e6, 0)


def read(*names):
    return "\n".join(open(os.path.join(LUA, n)).read() for n in names)


RULES = read("prelude.lua", "window.lua", "fixed_window.lua") + "\nlocal deciders = {[102] = decide_fixed_window}\n"
ENTRY = read("entry.lua")
SCRIPT = RULES + ENTRY
FUNCTION = ("#!lua name=sluicegate_floor\n" + RULES + "\nlocal function entry(KEYS, ARGV)\n" + ENTRY
            + "\nend\nredis.register_function('sluicegate_floor', entry)\n")
LEAN = r"""
local sunpack, pack, floor, ceil = struct.unpack, struct.pack, math.floor, math.ceil
local blob = ARGV[2]
local v = redis.call('MGET', KEYS[1])[1]
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local sw, count = -1, 0
if v then sw, count = sunpack('>dd', v, 2) end
local out, pos = {}, 1
while pos <= #blob do
  local _, n, L, m, d
  _, _, _, _, _, n, L, m, d, _, pos = sunpack('>BHHBdddddd', blob, pos)
  local qa = floor(now / d)
  local ra = now - qa * d
  local s = floor(ra * m / d)
  local w = qa * m + s
  if sw < w then sw, count = w, 0 end
  local allowed = count + n <= L
  if allowed then count = count + n end
  local qw = floor((sw + 1) / m)
  local left = qw * d + ceil(((sw + 1 - qw * m) * d) / m) - now
  out[#out + 1] = pack('>dddddd', allowed and 1 or 0, L - count, allowed and 0 or left,
    count > 0 and left or 0, 0, 0)
end
redis.call('SET', KEYS[1], pack('>Bdd', 70, sw, count), 'KEEPTTL')
return out
"""


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Redis:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.file = self.sock.makefile("rb")

    def reply(self):
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind in (b"+", b":"):
            return rest
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.file.read(n + 2)[:-2]
        return [self.reply() for _ in range(int(rest))]

    def call(self, *args):
        self.sock.sendall(encode(*args))
        return self.reply()

    def cpu(self):
        info = dict(l.split(":", 1) for l in self.call("INFO", "cpu").decode().split("\r\n") if ":" in l)
        return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def main():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        r = None
        for _ in range(100):
            try:
                r = Redis(port)
                r.call("PING")
                break
            except OSError:
                time.sleep(0.05)
        script, lean = r.call("SCRIPT", "LOAD", SCRIPT).decode(), r.call("SCRIPT", "LOAD", LEAN).decode()
        r.call("FUNCTION", "LOAD", "REPLACE", FUNCTION)
        member = lambda: struct.pack(">BH", 99, 1) + struct.pack(">HBdddddd", 1, 102, -1, 1, *PARAMS)
        head = {"script": ("EVALSHA", script), "function": ("FCALL", "sluicegate_floor"), "lean": ("EVALSHA", lean)}

        def run(variant, groups):
            blob = member() * groups
            calls = [encode(*head[variant], 1, "sluicegate:floor:%d" % (i % 1000), 1, blob) for i in range(N)]
            before = r.cpu()
            for i in range(0, N, 4):
                r.sock.sendall(b"".join(calls[i:i + 4]))
                for _ in calls[i:i + 4]:
                    r.reply()
            return (r.cpu() - before) / N / groups * 1e6

        print("| groups a call | script µs | function µs | lean µs | function / script | lean / script |")
        print("|--:|--:|--:|--:|--:|--:|")
        for groups in (1, 16, 64):
            got = {v: [] for v in head}
            for _ in range(TRIES):
                for v in head:
                    got[v].append(run(v, groups))
            med = {v: sorted(x)[len(x) // 2] for v, x in got.items()}
            print(f"| {groups} | {med['script']:.2f} | {med['function']:.2f} | {med['lean']:.2f} | "
                  f"{med['function'] / med['script']:.2f} | {med['lean'] / med['script']:.2f} |")
    finally:
        server.terminate()
        server.wait()


main()
