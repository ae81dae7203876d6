#!/usr/bin/env python3
"""One line per `cuth topopt` run of a benchmark folder, from its summary.json
and history.csv (kept as NAME/summary.json + NAME/history.csv or as
NAME.summary.json + NAME.history.csv): elements, design iterations, wall and
elastic-solve time, CG iterations in total and per design step (mean, max and
the step of the max), mean time per step (the first step's set-up included),
best compliance, validity, stop reason, failed solves. Used for the topology
optimization tables of BENCHMARKS.md:
    python3 bench/topopt_table.py DIR > DIR/table.txt"""
import csv
import glob
import json
import os
import sys

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)


def runs(d):
    for f in sorted(glob.glob(os.path.join(d, "*", "summary.json"))):
        yield os.path.basename(os.path.dirname(f)), f, os.path.join(os.path.dirname(f), "history.csv")
    for f in sorted(glob.glob(os.path.join(d, "*.summary.json"))):
        yield os.path.basename(f)[: -len(".summary.json")], f, f[: -len("summary.json")] + "history.csv"


def main(d):
    for name, sf, hf in sorted(runs(d)):
        try:
            s = json.load(open(sf))
            h = list(csv.DictReader(open(hf)))
        except Exception as e:  # a run that did not finish: say so, go on
            print(f"{name:16s} no summary/history: {e}")
            continue
        cg = [int(r["cg_iterations"]) for r in h]
        sec = [float(r["seconds"]) for r in h]
        t = s.get("timings_s", {})
        print(
            f"{name:16s} el {s['problem']['elements']:>9d} its {s['iterations']:>3d} "
            f"wall {s['wall_s']:7.2f} s solves {t.get('elastic_solves', 0):6.2f} s "
            f"CG {s['cg_iterations']:>6d} per-step mean {sum(cg) / len(cg):7.1f} max {max(cg):5d} "
            f"at {cg.index(max(cg)) + 1:3d} step {sum(sec) / len(sec) * 1e3:8.1f} ms "
            f"c {s['best']['compliance']:.5f} valid {s['best']['valid']} stop {s['stop']} "
            f"failed {s['cg'].get('failed_solves')}"
        )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: topopt_table.py DIR")
    main(sys.argv[1])
