#!/bin/bash
# Branch gradmg (issue 13): graded vs uniform grid of the same cell count on
# the H200, this branch (cuth) and main as staged at 12:24 (cuth_base), then
# the mg GPU tests. Run from main's repo root: bash .gpu/gradmg/run.sh
set -u
D=.gpu/gradmg; L=${OUT:-/tmp/out}/gradmg; mkdir -p $L; W=/tmp/wg; rm -rf $W; mkdir -p $W
mkdir -p /work && ln -sfn "$PWD" /work/main; ln -sfn "$PWD" /work/wt-gradmg
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/env.txt 2>&1
js() { local n=$1 bin=$2; shift 2; local s=$(date +%s%N)
  timeout 60 $D/$bin solve "$@" --json --no-maps --out $W/$n > $L/$n.log 2>&1; local rc=$?
  cp $W/$n/summary.json $L/$n.summary.json 2>/dev/null
  echo "$n rc=$rc $(( ($(date +%s%N) - s) / 1000000 )) ms" >> $L/steps.txt; }
for c in 100:80 50:144 10:664 6:1101; do
  cf=$W/b24_${c%:*}um.toml
  sed "s/^cell = \"50 um\"/cell = \"${c%:*} um\"/" benchmarks/package/die_on_spreader_24mm.toml > $cf
  for r in 1 2; do
    for b in cuth cuth_base; do
      js ${b}_b24_${c%:*}um_r$r $b $cf --device cuda
      js ${b}_b24_${c%:*}um_u${c#*:}_r$r $b $cf --device cuda --grid ${c#*:}x${c#*:}
    done
  done
done
for t in gpu_mg gpu_mg_setup; do
  timeout 100 $D/$t --ignored --nocapture --test-threads=1 > $L/t_$t.log 2>&1
  echo "t_$t rc=$? $(grep -E '^test result' $L/t_$t.log | tail -1)" >> $L/steps.txt
done
cat $L/steps.txt
# Everything in one file (the device tool returns a limited number of files).
cd "$L/.." && tar czf gradmg.tgz gradmg && rm -rf gradmg
