"""The table of BENCHMARKS.md's "HotSpot example 5" section from a raw
folder's summary_G.json and blocks_G.csv: python3 bench/hotspot_example5_table.py DIR"""
import csv, json, os, sys

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)
here = sys.argv[1]
# The reference: HotSpot's config (52000 Pa, water, 19 channels of 38
# links of 200 um x 100 um ducts 200 um long) and the trace's mean power.
a, b, l, mu = 100e-6, 200e-6, 200e-6, 8.89e-4
g = (1 - 0.63 * a / b) * a**3 * b / (12 * mu * l)
m_c = 19 * 52000 * g / 38 * 4172638.0
p = 32.0 + 0.7
want = 298.15 + p / m_c
rows = ["grid (along x flow)  cells  energy rel.err  coolant W  outlet mean K  inlet+P/(m c) K  diff K  hottest K (cell)  Heater avg/max C  DRAM max C  PCG its"]
for grid in ["39x39", "78x39", "156x39", "312x39"]:
    s = json.load(open(os.path.join(here, f"summary_{grid}.json")))
    c = s["coolant"][0]
    h = s["hottest"]
    blocks = {r["block"]: r for r in csv.DictReader(open(os.path.join(here, f"blocks_{grid}.csv")))}
    nx, ny, nz = s["grid"]["nx"], s["grid"]["ny"], s["grid"]["nz"]
    rows.append(
        f"{grid:>8}  {nx*ny*nz:>6}  {s['energy']['relative_error']:.2e}  {c['heat_w']:.9f}  {c['outlet_mean_k']:.9f}  {want:.9f}  "
        f"{c['outlet_mean_k']-want:+.2e}  {h['t_k']:.3f} ({h['layer']} x {h['x_m']*1e3:.3f} mm)  "
        f"{float(blocks['Heater']['t_avg_c']):.3f}/{float(blocks['Heater']['t_max_c']):.3f}  {float(blocks['DRAM']['t_max_c']):.3f}  {s['solver'].get('iterations')}"
    )
open(os.path.join(here, "table.txt"), "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
