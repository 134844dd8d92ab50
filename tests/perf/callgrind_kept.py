#!/usr/bin/env python3
"""The instructions and allocations of the collective layer in a callgrind profile.

Usage: callgrind_kept.py PROFILE REGEX...
Prints two integers:
 1. the profile's total Ir (what --toggle-collect collected) minus the inclusive cost of every
    call edge from a function whose name matches no REGEX into one whose name matches one (so
    nested excluded calls are not subtracted twice);
 2. the calls to the allocator (malloc, calloc, realloc, operator new) and to fmt's formatting
    (fmt::vformat, fmt::v*::detail::vformat_to) made by the kept code: by the functions the
    profile's roots (collected functions no collected function calls) reach without passing
    through an excluded function. What the excluded calls do (a transport's buffers, the store
    check behind busyCheck) is not counted.
Reads the callgrind format (name compression, "calls=" lines followed by the call's inclusive
cost); only the first event (Ir).
"""
import re
import sys

ALLOCATING = re.compile(r"^(malloc|calloc|realloc|operator new(\[\])?\(|"
                        r"fmt::v\d+::(vformat|detail::vformat_to)\b)")


def read_profile(path):
    """(total Ir, [(caller, callee, calls, inclusive Ir)], set of function names)."""
    names = {}
    edges = []
    functions = set()
    total = 0
    fn = cfn = None
    pending = None  # calls count of a "calls=" line, its cost line follows

    def resolve(spec):
        m = re.match(r"(\(\d+\))\s*(.*)$", spec)
        if not m:
            return spec
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), m.group(1))

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if pending is not None:
                parts = line.split()
                edges.append((fn, cfn, pending, int(parts[1]) if len(parts) > 1 else 0))
                pending = None
            elif line.startswith("fn="):
                fn = resolve(line[3:])
                functions.add(fn)
            elif line.startswith("cfn="):
                cfn = resolve(line[4:])
            elif line.startswith("calls="):
                pending = int(line[6:].split()[0])
            elif line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
    return total, edges, functions


def main():
    path, patterns = sys.argv[1], [re.compile(p) for p in sys.argv[2:]]
    total, edges, functions = read_profile(path)
    excluded = {n for n in functions | {e[1] for e in edges} if any(p.search(n) for p in patterns)}
    subtract = sum(cost for caller, callee, _, cost in edges
                   if callee in excluded and caller not in excluded)
    callees = {}
    called = set()
    for caller, callee, _, _ in edges:
        callees.setdefault(caller, set()).add(callee)
        called.add(callee)
    kept = {f for f in functions if f not in called and f not in excluded}
    todo = list(kept)
    while todo:
        for callee in callees.get(todo.pop(), ()):
            if callee not in kept and callee not in excluded and not ALLOCATING.search(callee):
                kept.add(callee)
                todo.append(callee)
    allocs = sum(calls for caller, callee, calls, _ in edges
                 if caller in kept and ALLOCATING.search(callee))
    print(total - subtract, allocs)


if __name__ == "__main__":
    main()
