"""Checks every native file in dist/ without running it: the wheels' Python modules, the npm
platform packages' Node modules, the servers and the Redis modules. For each: the format and
architecture its name promises (`file`), the entry point its host calls exported
(PyInit__native, napi_register_module_v1, RedisModule_OnLoad), and the libraries it needs:
glibc builds nothing newer than glibc 2.17 (the servers built natively for x86-64 excepted)
and nothing beyond the C runtime; musl builds musl's C library alone (static servers: no
interpreter and no library at all); macOS builds libSystem alone; Windows builds only DLLs
every Windows has. Tools: binutils' readelf, `file`, llvm-nm and llvm-objdump for Mach-O
(Debian's llvm), mingw-w64's objdump for PE. Prints one line per file; exits 1 on any problem.
Usage: python3 check-binaries.py DIST"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

dist = sys.argv[1]
problems = []
checked = 0

GLIBC_RUNTIME = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
                 "libgcc_s.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
# What a Windows DLL built by mingw-w64 may import: the system's own DLLs.
WINDOWS_SYSTEM = re.compile(r"^(kernel32|ntdll|advapi32|bcrypt|bcryptprimitives|ws2_32|userenv|"
                            r"msvcrt|api-ms-win-[a-z0-9-]+|ucrtbase|synchronization|shell32|ole32|"
                            r"secur32|crypt32|iphlpapi|user32|python3)\.dll$", re.I)


def run(*command):
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def tool(*names):
    for name in names:
        found = shutil.which(name) or (os.path.exists(name) and name)
        if found:
            return found
    raise SystemExit(f"check-binaries: none of {', '.join(names)} is installed")


def llvm(name):
    return tool(f"llvm-{name}", f"/usr/lib/llvm-14/bin/llvm-{name}", f"/usr/lib/llvm-16/bin/llvm-{name}")


def check_elf(path, label, arch, libc, entry):
    info = run("file", "-b", path)
    want = {"x86_64": "x86-64", "aarch64": "ARM aarch64"}[arch]
    if not info.startswith("ELF 64-bit") or want not in info:
        problems.append(f"{label}: not a 64-bit {want} ELF: {info.strip()}")
        return
    dynamic = run("readelf", "-dW", path)
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic))
    versions = sorted(set(re.findall(r"GLIBC_([0-9.]+)", run("readelf", "-VW", path))),
                      key=lambda v: tuple(map(int, v.split("."))))
    interp = "Requesting program interpreter" in run("readelf", "-lW", path)
    if entry and not re.search(rf"\s{entry}$", run("readelf", "-W", "--dyn-syms", path), re.M):
        problems.append(f"{label}: does not export {entry}")
    if libc == "static":
        if needed or interp:
            problems.append(f"{label}: not static: interpreter {interp}, needs {sorted(needed)}")
        detail = "static: no interpreter, no shared library"
    elif libc == "musl":
        # zig names musl's C library libc.so; musl's loader takes that name as itself.
        if versions or not needed or not all(re.fullmatch(r"libc(\.musl-\w+)?\.so(\.1)?", n) for n in needed):
            problems.append(f"{label}: needs more than musl's libc: {sorted(needed)}, GLIBC {versions}")
        detail = f"needs {', '.join(sorted(needed))} (musl's C library) only"
    else:
        extra = needed - GLIBC_RUNTIME
        if extra:
            problems.append(f"{label}: needs {sorted(extra)} beyond the C runtime")
        newest = versions[-1] if versions else "none"
        if libc == "gnu2.17" and versions and tuple(map(int, newest.split("."))) > (2, 17):
            problems.append(f"{label}: needs GLIBC_{newest}, newer than 2.17")
        detail = f"needs {', '.join(sorted(needed))}; glibc symbols up to {newest}"
    print(f"ok: {label}: {info.split(',')[0]}, {want}; {'exports ' + entry + '; ' if entry else ''}{detail}")


def check_macho(path, label, arch, entry):
    info = run("file", "-b", path)
    want = {"x86_64": "x86_64", "aarch64": "arm64"}[arch]
    if not info.startswith("Mach-O 64-bit") or want not in info:
        problems.append(f"{label}: not a 64-bit {want} Mach-O: {info.strip()}")
        return
    exported = run(llvm("nm"), "-g", "--defined-only", path).split()
    if f"_{entry}" not in exported:
        problems.append(f"{label}: does not export _{entry}")
    # The first entry is the library's own name (LC_ID_DYLIB), not a dependency.
    own = run(llvm("objdump"), "--macho", "--dylib-id", path).splitlines()[1:]
    dylibs = [line.split(" (")[0].strip() for line in
              run(llvm("objdump"), "--macho", "--dylibs-used", path).splitlines()[1:]]
    dylibs = [d for d in dylibs if d not in [o.strip() for o in own]]
    # Every macOS has /usr/lib's libraries (libSystem, libiconv) and its frameworks.
    if any(not d.startswith(("/usr/lib/", "/System/Library/")) for d in dylibs):
        problems.append(f"{label}: needs {dylibs} beyond macOS's own libraries")
    print(f"ok: {label}: Mach-O {want}; exports _{entry}; needs {', '.join(dylibs)} (macOS's own)")


def check_pe(path, label, entry):
    info = run("file", "-b", path)
    if not info.startswith("PE32+ executable (DLL)") or "x86-64" not in info:
        problems.append(f"{label}: not a PE32+ x86-64 DLL: {info.strip()}")
        return
    dump = run(tool("x86_64-w64-mingw32-objdump"), "-p", path)
    exports = dump.split("[Ordinal/Name Pointer] Table", 1)[-1]
    if not re.search(rf"\b{entry}\b", exports):
        problems.append(f"{label}: does not export {entry}")
    dlls = sorted(set(re.findall(r"DLL Name: (\S+)", dump)))
    foreign = [d for d in dlls if not WINDOWS_SYSTEM.match(d)]
    if foreign:
        problems.append(f"{label}: imports {foreign}, which a Windows machine may lack")
    print(f"ok: {label}: PE32+ DLL x86-64; exports {entry}; imports {', '.join(dlls)}")


def check(path, label, platform, entry):
    """platform: (os, arch, libc) with libc gnu2.17, gnu, musl, static or None."""
    global checked
    checked += 1
    system, arch, libc = platform
    if system == "linux":
        check_elf(path, label, arch, libc, entry)
    elif system == "macos":
        check_macho(path, label, arch, entry)
    else:
        check_pe(path, label, entry)


ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64", "x64": "x86_64"}
with tempfile.TemporaryDirectory() as work:
    for wheel in sorted(glob.glob(os.path.join(dist, "*.whl"))):
        tag = os.path.basename(wheel)[:-4].split("-")[-1]
        match = re.search(r"(manylinux2014|musllinux_1_2|macosx_\d+_\d+|win)_(x86_64|aarch64|arm64|amd64)", tag)
        if not match:
            problems.append(f"{wheel}: unknown platform tag {tag}")
            continue
        kind, arch = match.group(1), ARCH[match.group(2)]
        platform = {"manylinux2014": ("linux", arch, "gnu2.17"), "musllinux_1_2": ("linux", arch, "musl"),
                    "win": ("windows", arch, None)}.get(kind, ("macos", arch, None))
        with zipfile.ZipFile(wheel) as archive:
            names = [n for n in archive.namelist() if re.search(r"/_native[^/]*\.(so|pyd)$", n)]
            if len(names) != 1:
                problems.append(f"{wheel}: {len(names)} native modules")
                continue
            path = archive.extract(names[0], os.path.join(work, tag))
        check(path, f"{os.path.basename(wheel)} ({os.path.basename(names[0])})", platform, "PyInit__native")

    for package in sorted(glob.glob(os.path.join(dist, "sluicegate-*-*.tgz"))):
        match = re.match(r"sluicegate-(linux|darwin|win32)-(x64|arm64)(?:-(gnu|musl|msvc))?-\d", os.path.basename(package))
        if not match:
            continue
        system, arch, abi = match.groups()
        platform = {"linux": ("linux", ARCH[arch], "gnu2.17" if abi == "gnu" else "musl"),
                    "darwin": ("macos", ARCH[arch], None), "win32": ("windows", ARCH[arch], None)}[system]
        with tarfile.open(package) as archive:
            members = [m for m in archive.getmembers() if m.name.endswith(".node")]
            if len(members) != 1:
                problems.append(f"{package}: {len(members)} .node files")
                continue
            path = os.path.join(work, os.path.basename(package) + ".node")
            with open(path, "wb") as file:
                file.write(archive.extractfile(members[0]).read())
        check(path, f"{os.path.basename(package)} ({os.path.basename(members[0].name)})", platform,
              "napi_register_module_v1")

    for binary in sorted(glob.glob(os.path.join(dist, "sluicegate-server-*-linux-*"))):
        arch, libc = re.search(r"-(x86_64|aarch64)-linux-(gnu|musl)$", binary).groups()
        # The x86-64 glibc server is built by the machine's own toolchain, against its glibc.
        libc = {"musl": "static", "gnu": "gnu" if arch == "x86_64" else "gnu2.17"}[libc]
        check(binary, os.path.basename(binary), ("linux", arch, libc), None)

    for module in sorted(glob.glob(os.path.join(dist, "sluicegate-redis-module-*.so"))):
        arch = re.search(r"-(x86_64|aarch64)-linux-gnu\.so$", module).group(1)
        check(module, os.path.basename(module), ("linux", arch, "gnu2.17"), "RedisModule_OnLoad")

for problem in problems:
    print(f"check-binaries: {problem}", file=sys.stderr)
if checked == 0:
    problems.append("nothing to check")
    print(f"check-binaries: no native file in {dist}: run scripts/dist.sh first", file=sys.stderr)
print(f"check-binaries: {checked} files, {len(problems)} problems")
sys.exit(1 if problems else 0)
