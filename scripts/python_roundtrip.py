#!/usr/bin/env python3
"""Times the Python package's co-simulation round trip on HotSpot's ev6
stack: set every block's power (the trace's rows in turn), take one
backward-Euler step, read every block's temperatures.

    python3 scripts/python_roundtrip.py [--grid 64] [--steps 2000] [--device auto]

Prints the mean time of each call and of the round trip, ms.
"""

import argparse
import os
import time

import cuth

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STACK = os.path.join(ROOT, "configs", "hotspot_ev6_3d.toml")
TRACE = os.path.join(ROOT, "configs", "hotspot", "ev6_3D.ptrace")
DT_S = 3.333e-6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", type=int, default=64)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--device", default="auto")
    args = ap.parse_args()
    with open(TRACE) as f:
        names = f.readline().split()
        rows = [[float(v) for v in line.split()] for line in f if line.strip()]
    stack = cuth.Stack.from_toml(STACK, grid=(args.grid, args.grid), device=args.device)
    sim = stack.session()
    sim.set_power(dict(zip(names, rows[0])))
    sim.step(DT_S)  # builds the step's operator and hierarchy
    spent = {"set_power": 0.0, "step": 0.0, "blocks": 0.0}
    t0 = time.perf_counter()
    for k in range(args.steps):
        a = time.perf_counter()
        sim.set_power(dict(zip(names, rows[k % len(rows)])))
        b = time.perf_counter()
        sim.step(DT_S)
        c = time.perf_counter()
        sim.blocks()
        d = time.perf_counter()
        spent["set_power"] += b - a
        spent["step"] += c - b
        spent["blocks"] += d - c
    wall = time.perf_counter() - t0
    nx, ny = stack.grid_shape
    nz = sim.temperature().shape[0]
    print(f"ev6 {nx}x{ny}x{nz} on {stack.device}, {args.steps} round trips: "
          f"{1e3 * wall / args.steps:.3f} ms each")
    for name, s in spent.items():
        print(f"  {name}: {1e3 * s / args.steps:.3f} ms")


if __name__ == "__main__":
    main()
