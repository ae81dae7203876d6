#!/usr/bin/env python3
"""Dynamic thermal management with the cuth Python package: HotSpot's ev6
workload (configs/hotspot/ev6_3D.ptrace, its rows repeated) drives the
4-core die; whenever a core's hottest block passed 85 °C at the last step,
that core runs at half power for the next one. The same loop as
examples/dtm_serve.py, in process instead of over `cuth serve`'s pipe.

    pip install ./python
    python3 examples/dtm_python.py [--steps 10000] [--grid 64] [--device auto] [--precond P]
                                   [--record FILE]

Prints the throttled fraction per core, the hottest temperature seen and
the wall time; --record writes each step's hottest temperature per core
(K) as JSON, to compare with examples/dtm_serve.py.
"""

import argparse
import json
import os
import time

import cuth

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STACK = os.path.join(ROOT, "configs", "hotspot_ev6_3d.toml")
TRACE = os.path.join(ROOT, "configs", "hotspot", "ev6_3D.ptrace")
LIMIT_K = 85.0 + 273.15
DT_S = 3.333e-6  # HotSpot's default sampling interval


def read_ptrace(path):
    with open(path) as f:
        names = f.readline().split()
        rows = [[float(v) for v in line.split()] for line in f if line.strip()]
    return names, rows


def core_of(name):
    """Core index of an ev6 core-die block (`Icache_0` ... `IntExec_3`)."""
    if name.startswith("L2"):
        return None
    return int(name.rsplit("_", 1)[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--grid", type=int, default=64)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--precond", help="the preconditioner (default: the stack's, else mg)")
    ap.add_argument("--record", help="write each step's hottest temperature per core (K) as JSON")
    args = ap.parse_args()

    names, rows = read_ptrace(TRACE)
    stack = cuth.Stack.from_toml(STACK, grid=(args.grid, args.grid), device=args.device,
                                 precond=args.precond)
    sim = stack.session()
    cores = sorted({c for c in map(core_of, names) if c is not None})
    # Start from the steady state of the trace's first row, as HotSpot's
    # transient starts from its steady run.
    sim.set_power(dict(zip(names, rows[0])))
    sim.steady()
    # Blocks by core; a key is `layer.block` where a name is in several layers.
    keys = list(sim.blocks())
    by_core = {c: [k for k in keys if core_of(k.rsplit(".", 1)[-1]) == c] for c in cores}
    throttled = {c: False for c in cores}
    count = {c: 0 for c in cores}
    hottest = 0.0
    record = []
    t0 = time.perf_counter()
    for k in range(args.steps):
        row = rows[k % len(rows)]
        sim.set_power({n: (w / 2 if core_of(n) is not None and throttled[core_of(n)] else w)
                       for n, w in zip(names, row)})
        sim.step(DT_S)
        blocks = sim.blocks()
        temps = []
        for c in cores:
            t = max(blocks[b]["max"] for b in by_core[c] if blocks[b]["max"] is not None)
            temps.append(t)
            throttled[c] = t > LIMIT_K
            count[c] += throttled[c]
            hottest = max(hottest, t)
        record.append(temps)
    wall = time.perf_counter() - t0
    if args.record:
        with open(args.record, "w") as f:
            json.dump(record, f)
    print(f"{args.steps} steps of {DT_S:g} s at {args.grid}x{args.grid} on {stack.device}: "
          f"{wall:.2f} s ({1e3 * wall / args.steps:.3f} ms per step with its 3 calls)")
    print(f"hottest block: {hottest - 273.15:.2f} °C")
    for c in cores:
        print(f"core {c}: throttled {100 * count[c] / args.steps:.1f}% of steps")


if __name__ == "__main__":
    main()
