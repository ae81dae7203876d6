#!/usr/bin/env bash
# ktdev (issue 17, k(T) on the device): GPU tests, then mol_f2f_kt against
# mol_f2f (same binary) at 512², 1024², 2048² on CUDA. Logs under $OUT/kt.
set -u
B=.gpu/ktdev; L=${OUT:-/tmp/out}/kt; mkdir -p "$L"; W=/tmp/w; rm -rf $W; mkdir -p $W
# The test binaries find configs/ through their build path.
mkdir -p /work && ln -sfn "$PWD" /work/wt-ktdev
T0=$(date +%s); DEADLINE=${DEADLINE:-185}
step() { local n=$1 t=$2; shift 2; local left=$((DEADLINE - ($(date +%s) - T0)))
  ((left < 5)) && { echo "== $n skipped" | tee -a $L/steps.txt; return; }; ((t > left)) && t=$left
  local s=$(date +%s%N); timeout "$t" "$@" > "$L/$n.log" 2>&1; local rc=$?
  echo "== $n rc=$rc $(( ($(date +%s%N) - s) / 1000000 )) ms :: $(grep -E '^test result' $L/$n.log | tail -1)" | tee -a $L/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/env.txt 2>&1
step t_kt_device 40 $B/gpu_kt_device --ignored --nocapture --test-threads=1
js() { step "$1" 30 $B/cuth solve "${@:2}" --device cuda --json --no-maps --out $W/$1; }
for g in 512 1024 2048; do
  js lin$g configs/mol_f2f.toml --grid ${g}x$g
  js kt$g configs/mol_f2f_kt.toml --grid ${g}x$g
done
js kt1024_r2 configs/mol_f2f_kt.toml --grid 1024x1024
js lin1024_r2 configs/mol_f2f.toml --grid 1024x1024
step t_nonlinear 50 $B/gpu_nonlinear --ignored --nocapture --test-threads=1
step t_assemble 20 $B/gpu_assemble --ignored --nocapture --test-threads=1
step tr_nl 20 $B/cuth transient configs/mol_f2f_kt.toml --grid 128x128 --device cuda --dt 1e-2 --steps 5 --nonlinear-iterations 20 --init steady --no-maps --json --out $W/tr
