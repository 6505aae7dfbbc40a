#!/usr/bin/env python3
"""Writes crates/lembas/layout/hot.ld from a callgrind profile of lembas and the binary it ran.

usage: layout.py CALLGRIND_OUT... --binary UNSTRIPPED_LEMBAS --out hot.ld [--faults PERF_SCRIPT...]
(the profiles in order of weight)

The functions the profiled runs executed are named by their section (`.text.<symbol>`, one per
function), with what changes between builds of other profiles — the crate hashes in a symbol —
left to a wildcard, so the release build finds them whatever its hashes are.

Valgrind does not run everything lembas does: a command's process is started with a `clone`
it cannot follow, and code chosen by the CPU's features (SHA instructions, say) takes another
path under it. So a run outside valgrind adds what it faulted in: `--faults` takes `perf script
--no-demangle -F pid,ip,sym,addr,dso` of `perf record -e page-faults:u -c 1 -d` on a build
laid out by the list so far, and the functions whose code faulted (the fault's address is the
instruction's own) go after the profiles' own. A fault brings in the 64 KB around it, so one
run shows one function of each such piece: `scripts/layout.sh` repeats it until none is new.
"""
import re
import subprocess
import sys


def executed(profile):
    names, ran = {}, set()
    for line in open(profile, encoding="utf-8", errors="replace"):
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not m:
            continue
        kind, ident, name = m.groups()
        if name:
            names[ident] = re.sub(r"'\d+$", "", name)
        if kind == "fn":
            ran.add(ident)
    return {names[i] for i in ran if i in names}


FAULT = re.compile(r"^\s*(\d+)\s+([0-9a-f]+)\s+(\S+)\s+\(([^)]*)\)\s+([0-9a-f]+)\s+(\S+)\s+\(([^)]*)\)")


def faulted(script, binary):
    """The functions of `binary` whose own instructions faulted, in the first process recorded."""
    found, first = set(), None
    for line in open(script, encoding="utf-8", errors="replace"):
        m = FAULT.match(line)
        if not m:
            continue
        pid, addr, _, _, ip, symbol, dso = m.groups()
        first = first or pid
        # Later processes are the sandbox's launcher and the commands: not lembas' own memory.
        if pid == first and addr == ip and dso.endswith(binary.split("/")[-1]) and symbol != "[unknown]":
            found.add(symbol)
    return found


def pattern(symbol):
    """The symbol as a pattern that holds in any build: its hashes left to a wildcard."""
    # Legacy mangling: the hash closes the name (`17h<16 hex>E`).
    legacy = re.match(r"^(_ZN.*17h)[0-9a-f]{16}E$", symbol)
    if legacy:
        return legacy.group(1) + "*"
    if symbol.startswith("_R"):
        # v0 mangling: each crate is `Cs<base 62 hash>_<length><name>`.
        return re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", symbol)
    return symbol


def main():
    args = sys.argv[1:]
    binary = args[args.index("--binary") + 1]
    out = args[args.index("--out") + 1]
    faults = args[args.index("--faults") + 1 :] if "--faults" in args else []
    args = args[: args.index("--faults")] if "--faults" in args else args
    profiles = [a for i, a in enumerate(args) if not a.startswith("--") and args[i - 1] not in ("--binary", "--out")]
    listed = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    ours = {line.split()[2] for line in listed.splitlines() if len(line.split()) == 3 and line.split()[1] in "tT"}
    # The first profile's functions first, then what each later one adds: the linker places
    # them in this order, so a run like the first touches the front of the section only.
    patterns, seen = [], set()

    def add(ran):
        # Linker script words: a name with characters a script reads otherwise is left out.
        found = {p for p in map(pattern, ran & ours) if re.fullmatch(r"[A-Za-z0-9_.$*]+", p)}
        patterns.extend(sorted(found - seen))
        seen.update(found)

    for profile in profiles:
        # `a+b`: profiles of one weight, such as two runs of one task, which differ a little.
        add(set().union(*(executed(p) for p in profile.split("+"))))
    for script in faults:
        add(faulted(script, binary))
    with open(out, "w", encoding="utf-8") as f:
        f.write("/* Made by scripts/layout.sh: the functions lembas runs on the scripted task, then those a\n")
        f.write("   resume adds, placed side by side so the pages they share are few. See docs/performance.md. */\n")
        f.write("SECTIONS\n{\n  .text.hot :\n  {\n")
        for p in patterns:
            # A function marked cold (`#[cold]`, a panic's path) has its section under `.unlikely`.
            f.write(f"    *(.text.{p} .text.unlikely.{p})\n")
        f.write("  }\n}\nINSERT BEFORE .text;\n")
    print(f"{len(patterns)} functions of {len(ours)} -> {out}")


main()
