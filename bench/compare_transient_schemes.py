#!/usr/bin/env python3
"""Accuracy per cost of transient runs against a reference run.

Usage: compare_transient_schemes.py REF RUN... [--every S]

Each argument is a `cuth transient` output folder (timeseries.csv,
summary.json). The records at multiples of --every seconds (default 0.01,
HotSpot example 2's sampling interval) are compared with the reference's:
the swing of chip_max_c over time, and each block's rms error of its
chip.*_avg_c column; the worst block is printed with the wall time and the
step counts from summary.json.
"""
import csv, json, math, sys

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)


def records(d, every):
    rows = csv.DictReader(open(d + "/timeseries.csv"))
    out = {}
    for r in rows:
        k = float(r["time_s"]) / every
        if abs(k - round(k)) < 1e-6:
            out[round(k)] = r
    return out


def swing(rows):
    v = [float(r["chip_max_c"]) for r in rows]
    return max(v) - min(v)


def main(argv):
    every = 0.01
    if "--every" in argv:
        i = argv.index("--every")
        every = float(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    ref_dir, runs = argv[0], argv[1:]
    ref = records(ref_dir, every)
    first = next(iter(ref.values()))
    blocks = [c for c in first if c.startswith("chip.") and c.endswith("_avg_c")]
    sw_ref = swing([ref[k] for k in sorted(ref)])
    print(f"{'run':28} {'swing K':>8} {'swing err %':>11} {'max block rms K':>15} "
          f"{'wall s':>7} {'steps':>6} {'rej':>4} {'setups':>6}")
    print(f"{'reference':28} {sw_ref:8.4f}")
    for d in runs:
        rs = records(d, every)
        keys = [k for k in sorted(rs) if k in ref]
        worst = 0.0
        for b in blocks:
            e = [(float(rs[k][b]) - float(ref[k][b])) ** 2 for k in keys]
            worst = max(worst, math.sqrt(sum(e) / len(e)))
        sw = swing([rs[k] for k in keys])
        s = json.load(open(d + "/summary.json"))
        wall = sum(v for _, v in s["timings_s"])
        st = s["stepping"]
        print(f"{d.rstrip('/').split('/')[-1]:28} {sw:8.4f} {100 * (sw - sw_ref) / sw_ref:11.2f} "
              f"{worst:15.4f} {wall:7.2f} {st['steps_taken']:6} {st['steps_rejected']:4} "
              f"{st['step_setups']:6}")


if __name__ == "__main__":
    main(sys.argv[1:])
