#!/usr/bin/env python3
"""Table of "Graded grids against uniform ones" (and "Skipping unchanged
cells", both in BENCHMARKS.md's git history; relaxed work, `-` for a build without it) from the
summary.json files of a raw folder named <build>_b24_<cap>um[_u<N>]_r<run>
(python3 bench/graded_table.py DIR > DIR/table.txt)."""
import glob, json, os, re, sys

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)
os.chdir(sys.argv[1] if len(sys.argv) > 1 else ".")
rows = {}
for f in sorted(glob.glob("*.summary.json")):
    m = re.match(r"(cuth|cuth_base)_b24_(\d+)um(?:_u(\d+))?_r(\d)\.summary\.json", f)
    d = json.load(open(f)); s = d["solver"]; t = dict(d["timings_s"]); p = s["precond"]
    n = d["grid"]["cells"]; it = s["iterations"]; lv = p["multigrid"]["levels"]
    key = (m[1], int(m[2]), "uniform %s²" % m[3] if m[3] else "graded")
    rows.setdefault(key, []).append((n, it, t["solve"], t["solve"] / n / it * 1e9,
        sum(l["nx"] * l["ny"] for l in lv) / (lv[0]["nx"] * lv[0]["ny"]),
        p["multigrid"]["hierarchy_bytes"], p["params"]["hierarchy_fraction"], d["hottest"]["t_k"],
        p["params"].get("relaxed_work")))
print("build | cap um | grid | cells | it | PCG s (runs) | ns/cell/it (runs) | level work | relaxed work | hierarchy MB | hierarchy/A | Tmax K")
for (b, cap, g), rs in sorted(rows.items(), key=lambda kv: (-kv[0][1], kv[0][0], kv[0][2])):
    r = rs[0]
    print(f"{b} | {cap} | {g} | {r[0]} | {r[1]} | {' '.join('%.4f' % x[2] for x in rs)} | "
          f"{' '.join('%.3f' % x[3] for x in rs)} | {r[4]:.3f} | {'%.3f' % r[8] if r[8] else '-'} | "
          f"{r[5] / 1e6:.1f} | {r[6]:.3f} | {r[7]:.6f}")
