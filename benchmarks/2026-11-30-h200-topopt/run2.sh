#!/bin/bash
# topogpu follow-up for the lead's final GPU call (< 60 s): the defaults
# after the H200 run (mg, dense coarsest, residual checked every iteration
# under mg) on cantilever 216k / 1M, torsion 499k and a full 4.9M run.
# Binary next to this script: cuth (branch topogpu). Logs: $OUT/topogpu2/.
cd "$(dirname "$0")"
L=$OUT/topogpu2; mkdir -p "$L"
run() {
    local name=$1 lim=$2; shift 2
    /usr/bin/time -f "%e s wall, %M KB max RSS" timeout "$lim" ./cuth topopt "$@" --device cuda \
        --cg-max-iter 4000 --out "/tmp/o2_$name" --quiet > "$L/$name.log" 2>&1
    echo "rc $?" >> "$L/$name.log"
    cp "/tmp/o2_$name/summary.json" "$L/$name.summary.json" 2>/dev/null
    cp "/tmp/o2_$name/history.csv" "$L/$name.history.csv" 2>/dev/null
    rm -rf "/tmp/o2_$name"
}
run c120 10 cantilever --nelx 120
run c200 12 cantilever --nelx 200
run torsion 10 torsion
run c340 28 cantilever --nelx 340
python3 - "$L" <<'PY' | tee "$L/table.txt"
import csv, json, sys
for n in ("c120", "c200", "torsion", "c340"):
    try:
        s = json.load(open(f"{sys.argv[1]}/{n}.summary.json"))
        h = list(csv.DictReader(open(f"{sys.argv[1]}/{n}.history.csv")))
    except Exception as e:
        print(n, "no summary", e); continue
    cg = [int(r["cg_iterations"]) for r in h]
    print(f"{n:8s} el {s['problem']['elements']:>8d} its {s['iterations']:>3d} wall {s['wall_s']:6.2f} s "
          f"solves {s['timings_s']['elastic_solves']:6.2f} s CG {s['cg_iterations']:>5d} "
          f"per-step mean {sum(cg)/len(cg):5.1f} max {max(cg):3d} c {s['best']['compliance']:.5f} "
          f"valid {s['best']['valid']} stop {s['stop']}")
PY
