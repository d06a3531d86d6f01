#!/usr/bin/env python3
"""floors.py BUILD SRC: libkv's floors hold.

libkv lives in src/libkv/<floor>/, the floors from the bottom up:

    base    errors, checked arithmetic, units, dtypes, JSON, the machine
    model   configs, families, parameters, readers of configs and
            checkpoints, the cache's layout per token
    plan    GPUs, engines' rules, fit, serve, efficiencies, calibration
    engine  the decode engine and its kernels
    run     decode sessions, quality, bench, sweep, profile

A public header include/kv/X.h belongs to the floor of src/libkv/*/X.c.
Holds that:
  1. every source of libkv is in a floor, every public header has one;
  2. a file includes only its own floor and the floors below ("kv/X.h",
     "FLOOR/X.h" from another floor, a bare name from its own folder);
  3. the include graph has no circle;
  4. in BUILD's libkv.a, an object calls only objects of its own floor and
     the floors below, and no objects call each other round a circle.
Each breach is named, file and line or object and symbol.
"""
import os
import re
import subprocess
import sys

FLOORS = ["base", "model", "plan", "engine", "run"]
RANK = {f: i for i, f in enumerate(FLOORS)}


def circles(graph):
    """The circles of graph (node -> set of nodes): each group of nodes
    that reach one another (Tarjan's strongly connected components), as a
    sorted list, the groups of more than one node only."""
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    build, src = sys.argv[1], sys.argv[2]
    lib = os.path.join(src, "src", "libkv")
    pub = os.path.join(src, "include", "kv")
    bad = []
    floor_of = {}  # path relative to src -> floor
    unit_floor = {}  # basename without extension of a .c -> floor
    for name in sorted(os.listdir(lib)):
        p = os.path.join(lib, name)
        if os.path.isfile(p):
            bad.append(f"src/libkv/{name}: not in a floor ({', '.join(FLOORS)})")
        elif name not in RANK:
            bad.append(f"src/libkv/{name}/: not a floor ({', '.join(FLOORS)})")
        else:
            for f in sorted(os.listdir(p)):
                if f.endswith((".c", ".h")):
                    floor_of[f"src/libkv/{name}/{f}"] = name
                    if f.endswith(".c"):
                        if f[:-2] in unit_floor:
                            bad.append(f"src/libkv/{name}/{f}: a second {f}")
                        unit_floor[f[:-2]] = name
    for f in sorted(os.listdir(pub)):
        if f.endswith(".h"):
            fl = unit_floor.get(f[:-2])
            if fl is None:
                bad.append(f"include/kv/{f}: no src/libkv/*/{f[:-2]}.c gives it a floor")
            else:
                floor_of[f"include/kv/{f}"] = fl

    # 2 and 3: the includes
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    graph = {}
    for rel, fl in sorted(floor_of.items()):
        here = os.path.dirname(rel)
        graph[rel] = set()
        with open(os.path.join(src, rel), encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                m = inc.match(line)
                if not m:
                    continue
                name = m.group(1)
                if name.startswith("kv/"):
                    target = "include/" + name
                elif "/" in name:
                    target = "src/libkv/" + name
                else:
                    target = here + "/" + name
                if target not in floor_of:
                    bad.append(f"{rel}:{n}: includes \"{name}\", not a file of libkv's floors")
                    continue
                tf = floor_of[target]
                if RANK[tf] > RANK[fl]:
                    bad.append(f"{rel}:{n}: includes \"{name}\" of floor {tf}, above its own ({fl})")
                graph[rel].add(target)
    for c in circles(graph):
        bad.append("these include one another: " + ", ".join(c))

    # 4: the calls, object by object
    archive = os.path.join(build, "libkv.a")
    out = subprocess.run(["nm", "-A", archive], capture_output=True,
                         text=True, check=True).stdout
    defs, uses = {}, {}
    for line in out.splitlines():
        parts = line.split(":")
        if len(parts) < 3:
            continue
        obj = parts[1].replace(".c.o", "")
        f = parts[2].split()
        if len(f) == 2 and f[0] == "U":
            uses.setdefault(obj, set()).add(f[1])
        elif len(f) == 3 and f[1] in "TDBRC":
            defs[f[2]] = obj
    calls = {}
    for obj, syms in sorted(uses.items()):
        fl = unit_floor.get(obj)
        if fl is None:
            bad.append(f"libkv.a({obj}): no source in a floor")
            continue
        calls[obj] = set()
        for s in sorted(syms):
            to = defs.get(s)
            if to is None or to == obj:
                continue
            calls[obj].add(to)
            if RANK[unit_floor[to]] > RANK[fl]:
                bad.append(f"libkv.a: {obj} ({fl}) calls {s} of {to} ({unit_floor[to]}), a floor above")
    for c in circles(calls):
        bad.append("these objects call one another: " + ", ".join(c))

    for b in bad:
        print(b)
    per = {f: sum(1 for r, x in floor_of.items() if x == f and r.endswith(".c")) for f in FLOORS}
    print("floors: " + ", ".join(f"{f} {per[f]}" for f in FLOORS) +
          f" files; {sum(len(v) for v in graph.values())} includes, "
          f"{sum(len(v) for v in calls.values())} calls between objects; "
          f"{len(bad)} breaches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
