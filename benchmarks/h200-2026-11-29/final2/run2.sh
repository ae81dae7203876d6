#!/usr/bin/env bash
# Second final GPU check, after merging the transient host-overhead and the
# lazy mixed-precision set-up follow-ups: the thermal GPU tests (transient
# GPU=CPU exercises download_into), the mixed GPU tests (incl. the lazy
# switch from the device matrix), the precision ablation (set-up + solve),
# and the transient per-step wall/solve at 512² and 2048².
set -uo pipefail
START=$(date +%s)
T=target/release
ts() { echo "[$(( $(date +%s) - START )) s] $*"; }
{
ts "tests gpu"; timeout 120 $T/deps/gpu-805efcb48ab23794 --ignored --test-threads 1 2>&1 | grep -E "^test |test result|panicked"
ts "tests gpu_mixed"; timeout 90 $T/deps/gpu_mixed-ac2f7395d78b4c77 --ignored --test-threads 1 2>&1 | grep -E "^test |test result|panicked"
ts "done tests"
} > $OUT/tests2.log 2>&1
ts "ablation" >> $OUT/tests2.log
timeout 150 $T/cuth bench --precision-only --precisions f64,mixed --precision-sizes 512,2048 --cpu-max 0 --out /tmp/abl > $OUT/ablation.log 2>&1
echo "rc=$?" >> $OUT/ablation.log; cp /tmp/abl/*.md $OUT/ 2>/dev/null; ls /tmp/abl >> $OUT/ablation.log
ts "transient" >> $OUT/tests2.log
DEVICES=cuda GRIDS="512 2048" DTS="1e-4 1e-2" STEPS_cuda_512=20 STEPS_cuda_2048=3 CAP_S=90 timeout 200 bash scripts/bench_transient.sh $T/cuth /tmp/trb > $OUT/transient.log 2>&1
echo "rc=$?" >> $OUT/transient.log
ts "all done" >> $OUT/tests2.log
cat $OUT/tests2.log; tail -12 $OUT/transient.log
