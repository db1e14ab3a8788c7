#!/usr/bin/env python3
"""The crate's layering, checked: every `use crate::…`, `super::…` and inline `crate::…` path
in src/**/*.rs, resolved to the file that defines the item (following `pub use`
re-exports), then

  (a) each import that runs back up: from a file on a higher floor of DESIGN.md §4's list to
      one on a lower floor (the crate root counts as the lowest: it re-exports everything);
  (b) each file-level import circle (a strongly connected set of files), beyond the allowed
      pairs of a builder and the type it builds.

Exits 1 when there is any of either, else 0. Test code (`#[cfg(test)]` modules) is left out:
a test may reach anything. No dependencies: python3 alone.

    python3 scripts/layering.py            # the report; exit status for CI
    python3 scripts/layering.py --edges    # also every cross-file import, for reading
    python3 scripts/layering.py --src DIR  # another tree's src/ (an older commit's, say)
"""

import os
import re
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

# DESIGN.md §4, top to bottom: each floor imports only from floors above it (smaller numbers).
# Folders on one line of the list share a floor. Telemetry is "a leaf": called by the
# limiters, never the reverse, so it sits just above them. The crate root (lib.rs) re-exports
# everything: a path through it runs back up from anywhere.
FLOORS = [
    # error.rs holds the crate's two root errors (QuotaError, CapacityError), which the
    # floors from quota/ on all return: it imports nothing of the crate.
    # sync.rs is the door to atomics and locks (loom's under --cfg loom) every concurrent
    # floor goes through, the clock's included: it imports nothing of the crate.
    (["error", "sync"], -1),
    (["quota"], 0),
    (["decision"], 1),
    (["clock"], 2),
    (["algorithm"], 3),
    (["state"], 4),
    (["telemetry"], 4.5),
    (["limiter", "keyed"], 5),
    (["policy"], 6),
    (["backend"], 7),
    (["dynamic", "tiers", "config"], 8),
    (["wait", "redis"], 9),
    (["http"], 10),
]
ROOT_FLOOR = 99

# Circles allowed: a builder and the type it builds (each names the other).
ALLOWED_CIRCLES = [
    {"keyed/builder.rs", "keyed/mod.rs"},
    {"tiers/builder.rs", "tiers/limiter.rs"},
    {"dynamic/builder.rs", "dynamic/keyed.rs"},
    {"redis/builder.rs", "redis/limiter.rs"},
    {"http/builder.rs", "http/layer.rs"},
    {"http/builder.rs", "http/limiter.rs"},
]

# Circles being removed elsewhere, reported but not failed on (none now).
PENDING_CIRCLES = []

EXTERN = {"std", "core", "alloc"}


def floor_of(rel):
    """The floor of a file given relative to src/."""
    if rel == "lib.rs":
        return ROOT_FLOOR
    top = rel.split("/")[0]
    top = top[:-3] if top.endswith(".rs") else top
    for names, floor in FLOORS:
        if top in names:
            return floor
    raise SystemExit(f"layering.py: {rel} is on no floor of DESIGN.md §4: add its folder to FLOORS")


def strip_comments_and_strings(text):
    """`text` with comments, string and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            if m:
                out.append("' '")
                i += m.end()
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def use_paths(tree):
    """The paths a `use` tree names: `a::{b, c::d as e, f::*}` -> [[a,b],[a,c,d],[a,f,*]]."""
    tokens = re.findall(r"::|[{},*]|\w+", tree)
    paths = []

    def walk(prefix, i):
        """Reads one comma-separated list from token `i`; returns where it stopped."""
        path = list(prefix)
        while i < len(tokens):
            t = tokens[i]
            if t == "{":
                i = walk(path, i + 1)
                path = None
            elif t == "}":
                if path is not None and len(path) > len(prefix):
                    paths.append(path)
                return i + 1
            elif t == ",":
                if path is not None and len(path) > len(prefix):
                    paths.append(path)
                path = list(prefix)
            elif t == "as":
                i += 1  # the alias
            elif t != "::" and path is not None:
                path.append(t)
            i += 1
        if path is not None and len(path) > len(prefix):
            paths.append(path)
        return i

    walk([], 0)
    return paths


class Module:
    """One file: its module path, its child modules, its re-exports and its imports."""

    def __init__(self, rel, path):
        self.rel = rel
        self.path = path  # module path segments from the crate root
        self.children = set()
        self.test_children = set()
        self.reexports = {}  # name -> absolute path
        self.imports = []  # (absolute path, line)
        self.local_items = set()


def module_path_of(rel):
    parts = rel[:-3].split("/")
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts


def parse(rel, text):
    module = Module(rel, module_path_of(rel))
    code = strip_comments_and_strings(text)
    # Inline modules: track `mod name {` so `super::` inside resolves, and skip test modules.
    events = []
    for m in re.finditer(r"(#\[cfg\(test\)\]\s*)?(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*([;{])", code):
        is_test = bool(m.group(1)) or m.group(2) == "tests"
        if m.group(3) == ";":
            (module.test_children if is_test else module.children).add(m.group(2))
        else:
            events.append((m.start(), m.end(), m.group(2), is_test))
    # Brace depth per position, to know which inline module a path sits in.
    spans = []  # (start, end, name, is_test) of inline modules
    for start, body, name, is_test in events:
        depth, j = 1, body
        while j < len(code) and depth:
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
            j += 1
        spans.append((start, j, name, is_test))

    def context(pos):
        inner = [s for s in spans if s[0] <= pos < s[1]]
        inner.sort()
        if any(s[3] for s in inner):
            return None
        return module.path + [s[2] for s in inner]

    def line_of(pos):
        return code.count("\n", 0, pos) + 1

    def absolute(segments, here):
        if not segments:
            return None
        head = segments[0]
        if head == "crate":
            return segments[1:]
        if head == "self":
            return here + segments[1:]
        if head == "super":
            base = list(here)
            rest = list(segments)
            while rest and rest[0] == "super":
                base = base[:-1]
                rest = rest[1:]
            return base + rest
        if head in EXTERN:
            return None
        if here == module.path and head in module.children | module.test_children:
            return here + segments
        return None  # an external crate, or an item in scope

    # `use` statements (and `pub use` re-exports).
    for m in re.finditer(r"(\bpub(?:\([^)]*\))?\s+)?\buse\s+([^;]+);", code):
        here = context(m.start())
        if here is None:
            continue
        for segments in use_paths(m.group(2)):
            target = absolute(segments, here)
            if target is None:
                continue
            if m.group(1) and here == module.path:
                name = segments[-1]
                alias = re.search(r"\b" + re.escape(name) + r"\s+as\s+(\w+)", m.group(2))
                module.reexports[alias.group(1) if alias else name] = target
                # A re-export of a child module's item is the module's table of contents,
                # not an import; one from elsewhere is both.
                if target[: len(module.path) + 1][:-1] == module.path and len(target) > len(module.path) and target[len(module.path)] in module.children:
                    continue
            module.imports.append((target, line_of(m.start())))
    # Inline `crate::a::b` and `super::a` paths outside `use` statements.
    # Blanked in place (same length), so that positions still say which module a path is in.
    no_use = re.sub(r"\buse\s+[^;]+;", lambda m: re.sub(r"[^\n]", " ", m.group(0)), code)
    for m in re.finditer(r"\b(crate|super)((?:::\w+)+)", no_use):
        here = context(m.start())
        if here is None:
            continue
        segments = [m.group(1)] + [s for s in m.group(2).split("::") if s]
        target = absolute(segments, here)
        if target is not None:
            module.imports.append((target, line_of(m.start())))
    return module


def load():
    modules = {}
    for base, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".rs"):
                full = os.path.join(base, f)
                rel = os.path.relpath(full, ROOT).replace(os.sep, "/")
                with open(full, encoding="utf-8") as handle:
                    modules[rel] = parse(rel, handle.read())
    return modules


def build_index(modules):
    by_path = {tuple(m.path): m for m in modules.values()}
    return by_path


def test_files(modules, by_path):
    """Files that only tests compile (declared under `#[cfg(test)]`)."""
    tests = set()
    for m in modules.values():
        for child in m.test_children:
            child_module = by_path.get(tuple(m.path + [child]))
            if child_module:
                tests.add(child_module.rel)
    changed = True
    while changed:
        changed = False
        for m in modules.values():
            if m.rel in tests:
                for child in m.children:
                    c = by_path.get(tuple(m.path + [child]))
                    if c and c.rel not in tests:
                        tests.add(c.rel)
                        changed = True
    return tests


def resolve(target, by_path, seen=None):
    """The file defining the item at absolute path `target`."""
    seen = seen or set()
    key = tuple(target)
    if key in seen:
        return None
    seen.add(key)
    # The longest prefix that is a module file.
    for cut in range(len(target), -1, -1):
        module = by_path.get(tuple(target[:cut]))
        if module is None:
            continue
        if cut == len(target):
            return module.rel  # the module itself (`use crate::redis;`)
        name = target[cut]
        if name == "*" or name == "self":
            return module.rel
        if name in module.reexports:
            follow = module.reexports[name] + target[cut + 1:]
            found = resolve(follow, by_path, seen)
            return found or module.rel
        return module.rel
    return None


def main():
    global ROOT
    show_edges = "--edges" in sys.argv
    if "--src" in sys.argv:
        ROOT = sys.argv[sys.argv.index("--src") + 1]
    modules = load()
    by_path = build_index(modules)
    tests = test_files(modules, by_path)
    root_names = set(modules["lib.rs"].reexports)
    edges = defaultdict(set)
    where = {}
    for m in modules.values():
        if m.rel in tests:
            continue
        for target, line in m.imports:
            # A path through the crate root's re-exports (`crate::Quota`): charged to the root.
            if target and tuple(target[:1]) not in by_path and target[0] in root_names:
                dest = "lib.rs"
            else:
                dest = resolve(target, by_path)
            if dest is None or dest == m.rel or dest in tests:
                continue
            edges[m.rel].add(dest)
            where.setdefault((m.rel, dest), (line, "::".join(target)))
    # (a) imports that run back up.
    back = []
    for src, dests in sorted(edges.items()):
        for dest in sorted(dests):
            if floor_of(dest) > floor_of(src):
                line, path = where[(src, dest)]
                back.append(f"  src/{src}:{line} -> src/{dest} ({path})")
    # (b) file-level circles: strongly connected components (Tarjan).
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def connect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(set(edges) | {d for ds in edges.values() for d in ds}):
        if v not in index:
            connect(v)
    allowed = [c for c in comps if set(c) in ALLOWED_CIRCLES]
    pending = [c for c in comps if set(c) in PENDING_CIRCLES]
    other = [c for c in comps if c not in allowed and c not in pending]
    if show_edges:
        print("imports between files:")
        for src, dests in sorted(edges.items()):
            print(f"  {src} -> {', '.join(sorted(dests))}")
    print(f"(a) imports that run back up a floor: {len(back)}")
    for b in back:
        print(b)
    print(
        f"(b) file-level circles: {len(comps)} ({len(allowed)} allowed: a builder and its type; "
        f"{len(pending)} pending removal elsewhere)"
    )
    for c in comps:
        mark = "allowed" if c in allowed else "pending" if c in pending else "NOT ALLOWED"
        inner = []
        for a in c:
            for b in c:
                if b in edges.get(a, ()):
                    inner.append(f"{a}:{where[(a, b)][0]} -> {b}")
        print(f"  [{mark}] {' <-> '.join(c)}")
        for i in inner:
            print(f"      {i}")
    sys.exit(1 if back or other else 0)


if __name__ == "__main__":
    main()
