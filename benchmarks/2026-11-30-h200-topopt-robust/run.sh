#!/usr/bin/env bash
# Branch topmg2 (issue 18, --mg-w-levels): run from the repo root on the GPU
# machine: bash .gpu/topmg2/run.sh. Logs, summaries, histories under $OUT.
set -u
B=.gpu/topmg2; L=${OUT:-/tmp/out}; mkdir -p $L; W=/tmp/w; rm -rf $W; mkdir -p $W
mkdir -p /work && ln -sfn "$PWD" /work/main
T0=$(date +%s); DEADLINE=${DEADLINE:-285}
step() { local n=$1 t=$2; shift 2; local left=$((DEADLINE - ($(date +%s) - T0)))
  ((left < 5)) && { echo "== $n skipped" | tee -a $L/steps.txt; return; }; ((t > left)) && t=$left
  local s=$(date +%s%N); timeout "$t" "$@" > "$L/$n.log" 2>&1; local rc=$?
  echo "== $n rc=$rc $(( ($(date +%s%N) - s) / 1000000 )) ms" | tee -a $L/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/env.txt 2>&1
step t_gpu_topopt_mg 40 $B/gpu_topopt_mg --ignored --nocapture --test-threads=1
tp() { step "$1" "$2" $B/cuth topopt "${@:3}" --device cuda --quiet --out $W/$1; cp $W/$1/summary.json $L/$1.summary.json 2>/dev/null; cp $W/$1/history.csv $L/$1.history.csv 2>/dev/null; rm -rf $W/$1; }
for w in 0 1 2 3 9; do tp torsion_w$w 20 torsion --mg-w-levels $w; done
for w in 0 2 3; do tp c200_w$w 20 cantilever --nelx 200 --mg-w-levels $w; done
for w in 0 2; do tp c340_w$w 40 cantilever --nelx 340 --mg-w-levels $w; done
tp c740_w2 150 cantilever --nelx 740 --mg-w-levels 2
tp c740_w1_36 70 cantilever --nelx 740 --mg-w-levels 1 --iterations 36
python3 - "$L" <<'PY' | tee $L/table.txt
import json, sys, csv, glob, os
L = sys.argv[1]
for f in sorted(glob.glob(f"{L}/*.summary.json")):
    n = os.path.basename(f)[:-13]
    try:
        s = json.load(open(f)); h = list(csv.DictReader(open(f"{L}/{n}.history.csv")))
        cg = [int(r["cg_iterations"]) for r in h]
        print(f"{n:12s} el {s['problem']['elements']} its {s['iterations']} wall {s['wall_s']:.2f}s solves {s['timings_s']['elastic_solves']:.2f}s CG/step mean {sum(cg)/len(cg):.1f} max {max(cg)} at {cg.index(max(cg))+1} c {s['best']['compliance']:.5f} stop {s['stop']}")
    except Exception as e: print(n, "no summary", e)
PY
