#!/usr/bin/env python3
"""Round trip of `cuth serve`: set new block powers, take one step, read the
block temperatures, as a co-simulation loop does every call. The three
requests go in one write and their three replies are read back; the time is
the client's, JSON encoding and decoding included.

    python3 bench/serve.py [--stack configs/hotspot_ev6_3d.toml] [--grid 128]
        [--device auto] [--rounds 2000] [--dt 3.333e-6] [--precond P] [--split]

Prints one line per setting: the median, mean and 95th percentile of a
round trip in ms, and the mean PCG iterations per step. CUTH_BIN names the
binary (default target/release/cuth).
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stack", default=os.path.join(ROOT, "configs", "hotspot_ev6_3d.toml"))
    ap.add_argument("--grid", type=int, default=128)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--dt", type=float, default=3.333e-6)
    ap.add_argument("--precond", help="the server's --precond (default: its own)")
    ap.add_argument("--split", action="store_true",
                    help="time set_power, step, blocks, info and hottest one by one instead")
    args = ap.parse_args()
    cuth = os.environ.get("CUTH_BIN", os.path.join(ROOT, "target", "release", "cuth"))
    p = subprocess.Popen(
        [cuth, "serve", args.stack, "--grid", f"{args.grid}x{args.grid}", "--device", args.device]
        + (["--precond", args.precond] if args.precond else []),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    hello = json.loads(p.stdout.readline())

    def ask(*reqs):
        p.stdin.write("".join(json.dumps(r) + "\n" for r in reqs))
        p.stdin.flush()
        replies = [json.loads(p.stdout.readline()) for _ in reqs]
        for q, r in zip(reqs, replies):
            if not r["ok"]:
                raise SystemExit(f"{q['op']}: {r['error']}")
        return replies

    info = ask({"op": "info"})[0]["info"]
    drivable = {l["name"] for l in info["layers"] if l["drivable"]}
    blocks = [(b["name"], b["power_w"]) for b in info["blocks"] if b["layer"] in drivable]
    rng = random.Random(1)
    ask({"op": "steady"})
    if args.split:
        return split(ask, blocks, rng, args, hello)
    times, iters = [], []
    for k in range(args.rounds + 20):
        power = {n: w * rng.uniform(0.8, 1.2) for n, w in blocks}
        t = time.perf_counter()
        _, step, _ = ask({"op": "set_power", "blocks": power}, {"op": "step", "dt": args.dt},
                         {"op": "blocks"})
        if k >= 20:  # the first rounds build the step's hierarchy
            times.append(1e3 * (time.perf_counter() - t))
            iters.append(step["solver"]["iterations"])
    ask({"op": "quit"})
    times.sort()
    print(json.dumps({
        "stack": os.path.basename(args.stack), "grid": f"{args.grid}x{args.grid}x{info['nz']}",
        "device": hello["device"], "precond": args.precond or "default", "blocks_set": len(blocks), "rounds": args.rounds,
        "median_ms": round(statistics.median(times), 4),
        "mean_ms": round(statistics.fmean(times), 4),
        "p95_ms": round(times[int(0.95 * len(times))], 4),
        "iterations_per_step": round(statistics.fmean(iters), 2),
    }))


def split(ask, blocks, rng, args, hello):
    """Each request on its own round trip: the median per kind, ms."""
    kinds = {"set_power": [], "step": [], "blocks": [], "info": [], "hottest": []}
    for k in range(args.rounds + 20):
        reqs = {
            "set_power": {"op": "set_power", "blocks": {n: w * rng.uniform(0.8, 1.2) for n, w in blocks}},
            "step": {"op": "step", "dt": args.dt},
            "blocks": {"op": "blocks"},
            "info": {"op": "info"},
            "hottest": {"op": "hottest"},
        }
        for op, req in reqs.items():
            t = time.perf_counter()
            ask(req)
            if k >= 20:
                kinds[op].append(1e3 * (time.perf_counter() - t))
    ask({"op": "quit"})
    print(json.dumps({"device": hello["device"], "grid": args.grid, "rounds": args.rounds,
                      **{f"{op}_median_ms": round(statistics.median(v), 4) for op, v in kinds.items()}}))


if __name__ == "__main__":
    main()
