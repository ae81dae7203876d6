"""Per-block hottest point: HotSpot .steady files (run with -grid_map_mode max)
against cuth blocks.csv (t_max_k, --block-map max). Prints a table.
Usage: python3 bench/hotspot/compare.py LABEL=FILE.steady|blocks.csv ..."""
import csv, sys

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)
LAYERS = ["L0_cache_1", "L1_tim_tsv", "L2_cache_2", "L3_tim_tsv", "L4_cores", "L5_tim"]

def hotspot(path):
    out = {}
    for line in open(path):
        name, t = line.split()
        if name.startswith("layer_"):
            n, unit = name[6:].split("_", 1)
            out[(LAYERS[int(n)], unit)] = float(t)
    return out

def cuth(path):
    return {(r["layer"], r["block"]): float(r["t_max_k"]) for r in csv.DictReader(open(path))}

cols = [(a.split("=", 1)[0], a.split("=", 1)[1]) for a in sys.argv[1:]]
data = [(label, hotspot(p) if p.endswith(".steady") else cuth(p)) for label, p in cols]
keys = list(data[0][1].keys())
print("| layer | block | " + " | ".join(l for l, _ in data) + " |")
print("|---|---|" + "---|" * len(data))
for k in keys:
    print(f"| {k[0]} | {k[1]} | " + " | ".join(f"{d[k]:.2f}" for _, d in data) + " |")
ref = data[0][1]
for label, d in data[1:]:
    diffs = [d[k] - ref[k] for k in keys]
    worst = max(keys, key=lambda k: abs(d[k] - ref[k]))
    print(f"# {label} - {data[0][0]}: min {min(diffs):+.2f} max {max(diffs):+.2f} K, worst {worst} {d[worst]-ref[worst]:+.2f}")
