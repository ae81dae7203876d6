#!/usr/bin/env bash
# Final integrated GPU check on merged main: every ignored GPU test, the
# default solve/transient on cuda, then topopt full optimizations.
set -uo pipefail
START=$(date +%s)
T=target/release
ts() { echo "[$(( $(date +%s) - START )) s] $*"; }
{
ts "tests gpu"; timeout 120 $T/deps/gpu-805efcb48ab23794 --ignored --test-threads 1 2>&1 | grep -E "^test |test result|panicked|max|ΔT" ; echo "rc=$?"
ts "tests gpu_mixed"; timeout 60 $T/deps/gpu_mixed-ac2f7395d78b4c77 --ignored --test-threads 1 2>&1 | grep -E "^test |test result|panicked" ; echo "rc=$?"
ts "tests gpu_topopt"; timeout 90 $T/deps/gpu_topopt-666734a37d45211f --ignored --test-threads 1 2>&1 | grep -E "^test |test result|panicked" ; echo "rc=$?"
ts "solve 512 cuda (default precision)"; timeout 30 $T/cuth solve configs/mol_f2f.toml --grid 512x512 --device cuda --out /tmp/s512 --quiet --json > $OUT/solve512.json; echo "rc=$?"
ts "transient cuda"; timeout 30 $T/cuth transient configs/hotspot_ev6_3d.toml --dt 1e-4 --t-end 0.02 --trace configs/hotspot/ev6_burst.csv --device cuda --out /tmp/tr --quiet; echo "rc=$?"
ts "done tests"
} > $OUT/tests.log 2>&1
export CUTH=$T/cuth DEADLINE_S=$((560 - ($(date +%s) - START))) OPT_ARGS="--cg-max-iter 4000 --quiet"
export OPT_CASES="cantilever --load patch --nelx 120;cantilever --load patch --nelx 200;torsion;cantilever --load patch --nelx 252"
OPT_CAP=150 bash scripts/bench_topopt.sh opt > $OUT/opt.log 2>&1
cp $OUT/topopt/summary.md $OUT/opt_summary.md 2>/dev/null
tar czf $OUT/topopt_logs.tgz -C $OUT topopt && rm -rf $OUT/topopt
ts "all done"; tail -5 $OUT/tests.log
