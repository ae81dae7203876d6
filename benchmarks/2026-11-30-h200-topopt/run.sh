#!/bin/bash
# topogpu (issue 18 items 2-4): one H200 call. GPU tests of the device design
# loop and of mg, then `cuth topopt` jacobi against mg (per design step CG
# iterations and wall time from history.csv), then the largest mesh.
# Binaries next to this script: cuth, gpu_topopt_design, gpu_topopt_mg.
cd "$(dirname "$0")"
L=$OUT/logs; mkdir -p "$L"
T0=$(date +%s); BUDGET=${BUDGET:-262}
left() { echo $((BUDGET - ($(date +%s) - T0))); }
./cuth info > "$L/info.txt" 2>&1
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv >> "$L/info.txt" 2>&1
timeout 45 ./gpu_topopt_design --ignored --nocapture --test-threads=1 > "$L/test_design.log" 2>&1
echo "rc $?" >> "$L/test_design.log"
timeout 25 ./gpu_topopt_mg --ignored --nocapture --test-threads=1 > "$L/test_mg.log" 2>&1
echo "rc $?" >> "$L/test_mg.log"
# run NAME LIMIT_S ARGS...: one optimization, summary + history kept.
run() {
    local name=$1 lim=$2; shift 2
    local l; l=$(left)
    if (( l < 8 )); then echo "$name: skipped (budget)" >> "$L/skipped.txt"; return; fi
    (( lim > l )) && lim=$l
    echo "== $name (limit $lim s): cuth topopt $* --device cuda --cg-max-iter 4000 --quiet" > "$L/$name.log"
    /usr/bin/time -v timeout "$lim" ./cuth topopt "$@" --device cuda --cg-max-iter 4000 \
        --out "/tmp/o_$name" --quiet >> "$L/$name.log" 2>&1
    echo "rc $?" >> "$L/$name.log"
    mkdir -p "$L/$name"
    cp "/tmp/o_$name/summary.json" "/tmp/o_$name/history.csv" "$L/$name/" 2>/dev/null
    rm -rf "/tmp/o_$name"
}
run c200_mg_cg 32 cantilever --nelx 200 --precond mg --mg-coarse cg
run c200_mg_dense 32 cantilever --nelx 200 --precond mg --mg-coarse dense
# The faster coarse solver at 1M for the remaining mg runs.
MG=$(python3 - "$L" <<'PY'
import json, sys
w = {}
for c in ("cg", "dense"):
    try: w[c] = json.load(open(f"{sys.argv[1]}/c200_mg_{c}/summary.json"))["wall_s"]
    except Exception: w[c] = 1e9
print(min(w, key=w.get))
PY
)
echo "mg coarse for the rest: $MG" >> "$L/info.txt"
run c200_jacobi 26 cantilever --nelx 200 --precond jacobi
run c120_mg 10 cantilever --nelx 120 --precond mg --mg-coarse "$MG"
run c120_jacobi 10 cantilever --nelx 120 --precond jacobi
run torsion_mg 15 torsion --precond mg --mg-coarse "$MG"
run torsion_jacobi 14 torsion --precond jacobi
run c340_mg 30 cantilever --nelx 340 --precond mg --mg-coarse "$MG" --iterations 15
run c340_jacobi 26 cantilever --nelx 340 --precond jacobi --iterations 8
# The largest: 740x370x185 = 50.6 M elements, 2 design iterations, memory sampled.
nvidia-smi --query-gpu=memory.used --format=csv,noheader -lms 500 > "$L/c740_mem.csv" 2>&1 &
SMI=$!
run c740_mg 200 cantilever --nelx 740 --precond mg --mg-coarse "$MG" --iterations 2
kill $SMI 2>/dev/null
# A table on stdout (the device returns its tail even if the tar does not).
python3 - "$L" <<'PY' | tee "$L/table.txt"
import csv, glob, json, os, sys
for d in sorted(glob.glob(sys.argv[1] + "/*/")):
    try:
        s = json.load(open(d + "summary.json"))
        h = list(csv.DictReader(open(d + "history.csv")))
    except Exception as e:
        print(os.path.basename(d[:-1]), "no summary", e); continue
    cg = [int(r["cg_iterations"]) for r in h]; sec = [float(r["seconds"]) for r in h]
    t = s.get("timings_s", {})
    print(f"{os.path.basename(d[:-1]):16s} el {s['problem']['elements']:>9d} its {s['iterations']:>3d} "
          f"wall {s['wall_s']:7.2f} s solves {t.get('elastic_solves', 0):6.2f} s "
          f"CG {s['cg_iterations']:>6d} per-step mean {sum(cg)/len(cg):7.1f} max {max(cg):5d} "
          f"step {sum(sec)/len(sec)*1e3:8.1f} ms c {s['best']['compliance']:.5f} "
          f"valid {s['best']['valid']} stop {s['stop']} failed {s['cg'].get('failed_solves')}")
PY
tail -2 "$L/c740_mem.csv" 2>/dev/null; sort -n "$L/c740_mem.csv" 2>/dev/null | tail -1
grep -h "test result\|panicked\|^rc" "$L"/test_*.log
cat "$L/skipped.txt" 2>/dev/null
tar czf "$OUT/topogpu_logs.tgz" -C "$OUT" logs && rm -rf "$L"
