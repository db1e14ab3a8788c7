#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (fuzz/seeds/<target>/) from the repository's tests:
the string literals the tests feed each parser, and the binary forms (module calls, packed
replies, protobufs) built the way the tests build them. Run from anywhere:
    python3 fuzz/seeds/make.py
"""
import hashlib
import os
import re
import shutil
import struct

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "fuzz", "seeds")


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def literals(text):
    """Rust string literals, plain and raw, unescaped."""
    out = []
    for m in re.finditer(r'r(#+)"(.*?)"\1', text, re.S):
        out.append(m.group(2))
    text = re.sub(r'r(#+)".*?"\1', "", text, flags=re.S)
    for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', text):
        s = m.group(1)
        s = re.sub(r"\\\n\s*", "", s)
        s = (s.replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"')
             .replace("\\0", "\0").replace("\\\\", "\\"))
        out.append(s)
    return out


def write(target, seeds):
    directory = os.path.join(OUT, target)
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    for seed in seeds:
        if isinstance(seed, str):
            seed = seed.encode()
        name = hashlib.sha1(seed).hexdigest()[:16]
        with open(os.path.join(directory, name), "wb") as f:
            f.write(seed)


def quota_seeds():
    texts = literals(read("tests/quota_parse.rs")) + literals(read("src/quota/parse.rs"))
    return sorted({t for t in texts if 0 < len(t) < 80 and re.search(r"\d|per|burst", t)})


def config_seeds():
    texts = [read("server/examples/config.yaml")]
    for name in sorted(os.listdir(os.path.join(ROOT, "server", "tests"))):
        if name.endswith(".rs"):
            texts += [t for t in literals(read("server/tests/" + name)) if "domain:" in t]
    return sorted(set(texts))


def json_seeds():
    texts = []
    for name in sorted(os.listdir(os.path.join(ROOT, "server", "tests"))):
        if name.endswith(".rs"):
            texts += [t for t in literals(read("server/tests/" + name))
                      if t.lstrip().startswith("{") and "domain" in t]
    return sorted(set(texts))


# Protobuf, by hand: RateLimitRequest {1: domain, 2: descriptors, 3: hits_addend};
# RateLimitDescriptor {1: entries, 2: limit {1: requests_per_unit, 2: unit}, 3: hits_addend};
# Entry {1: key, 2: value}.
def varint(n):
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def field(number, payload):
    if isinstance(payload, int):
        return varint(number << 3) + varint(payload)
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def request(domain, descriptors, hits=None):
    out = field(1, domain)
    for entries, limit, addend in descriptors:
        d = b"".join(field(1, field(1, k) + field(2, v)) for k, v in entries)
        if limit:
            d += field(2, field(1, limit[0]) + field(2, limit[1]))
        if addend is not None:
            d += field(3, addend)
        out += field(2, d)
    if hits is not None:
        out += field(3, hits)
    return out


def protobuf_seeds():
    return [
        request("web", [([("path", "/")], None, None)]),
        request("web", [([("path", "/login")], None, 2)], hits=3),
        request("web", [([("user", "vip-1")], None, None), ([("user", "bob")], None, 0)]),
        request("web", [([("tenant", "t1"), ("api", "bulk")], (5, 2), None)]),
        request("web", [([("tenant", "t1"), ("api", "read")], None, None)] * 3),
        request("", [([("path", "/")], None, None)]),
        request("web", []),
        request("other", [([("k", "v")], None, None)]),
    ]


def client_ip_seeds():
    text = read("tests/http_client_ip.rs")
    pairs = re.findall(r'\("(x-forwarded-for|forwarded)",\s*"((?:[^"\\]|\\.)*)"\)', text, re.I)
    chains = {v for _, v in pairs} | {"for=192.0.2.60;proto=http;by=203.0.113.43",
                                       'for="[2001:db8:cafe::17]:4711"', "for=unknown, for=_hidden"}
    seeds = []
    for settings in (0x00, 0x06, 0x0E, 0x13, 0x1A, 0x27):
        for name, value in pairs:
            seeds.append(bytes([settings]) + f"{name}: {value}".encode())
        for chain in sorted(chains):
            seeds.append(bytes([settings]) + f"x-forwarded-for: {chain}\nforwarded: {chain}".encode())
    return seeds


def member(key, letter, now, n, params):
    return struct.pack(">HB", key, ord(letter)) + struct.pack(">6d", now, n, *params)


def group(op, members):
    return struct.pack(">BH", ord(op), len(members)) + b"".join(members)


def module_call_seeds():
    # As the module's tests pack them (redis-module/tests): fixed window, GCRA, token bucket,
    # sliding window, on Redis's clock (-1) and on a client's.
    fixed = member(1, "f", -1, 1, (10, 1, 1e6, 0))
    gcra = member(2, "g", -1, 1, (1, 360e6, 3600e6, 360e6))
    bucket = member(1, "t", -1, 3, (360e6, 1, 3600e6, 1080e6))
    sliding = member(2, "w", 1_000_000.0, 1, (5, 3600e6, 1, 0))
    capped = member(1, "g", -1, 1, (1, 1, 10, 1e15))
    state = b"F" + struct.pack(">dd", 1_795_000_000.0, 3)
    wide = b"W" + struct.pack(">ddd", 1.0, 2, 3)
    blobs = [
        group("c", [fixed]),
        group("h", [fixed]) + group("p", [gcra]),
        group("r", [bucket]),
        group("c", [fixed, gcra]) + group("c", [sliding]),
        group("h", [capped]),
        group("c", [member(1, "s", -1, 1, (1, 1, 1, 0))]),
        group("c", []),
    ]
    # Two keys: missing, a state, another type, a foreign string.
    heads = [bytes([2, 0, 0]), bytes([2, 3]) + state + bytes([7]) + wide, bytes([2, 1, 2])]
    return [head + blob for head in heads for blob in blobs]


def part(b):
    return struct.pack(">I", len(b)) + b


def native_reply_seeds():
    numbers = struct.pack(">6d", 1, 9, 0, 1e6, 0, 0)
    denied = struct.pack(">6d", 0, 0, 5e5, 1e6, 0, 5e5)
    return [
        b"n" + part(numbers),
        b"n" + part(numbers + denied),
        b"u" + part(numbers) + part(b"") + part(b"G" + bytes(16)),
        b"n" + part(denied) + b"u" + part(numbers) + part(b"F" + bytes(16)) + part(b"F" + bytes(16)),
        b"",
    ]


def main():
    write("quota", quota_seeds())
    write("service_config", config_seeds())
    write("service_json", json_seeds())
    write("rls_protobuf", protobuf_seeds())
    write("client_ip", client_ip_seeds())
    write("module_call", module_call_seeds())
    write("native_reply", native_reply_seeds())
    for target in sorted(os.listdir(OUT)):
        path = os.path.join(OUT, target)
        if os.path.isdir(path):
            print(target, len(os.listdir(path)))


if __name__ == "__main__":
    main()
