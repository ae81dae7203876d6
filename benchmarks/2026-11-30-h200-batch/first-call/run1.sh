#!/usr/bin/env bash
# GPU call 1 of helper `batch`: validate kernels/batch.cu + quick benchmark.
set -x
OUT=${OUT:-/tmp/out}; L=$OUT/logs; mkdir -p "$L"
cd "$(dirname "$0")"
T0=$(date +%s)
./cuth info > "$L/info.txt" 2>&1
CUTH_CUDA_SYNC=1 timeout 40 ./gpu_sweep_batch --ignored --nocapture --test-threads=1 cuda_batched > "$L/batch_equal.log" 2>&1; echo "rc=$?" >> "$L/batch_equal.log"
timeout 20 ./gpu_mg --ignored --nocapture --test-threads=1 > "$L/gpu_mg.log" 2>&1; echo "rc=$?" >> "$L/gpu_mg.log"
timeout 50 ./gpu_sweep_batch --ignored --nocapture --test-threads=1 cuda_batch_rate > "$L/batch_rate.log" 2>&1; echo "rc=$?" >> "$L/batch_rate.log"
bash ../../scripts/sweep_cases.sh 1000 /tmp/cases.toml
for k in 1 64; do
  n=1000; [ $k = 1 ] && n=200
  head -n $((4*n)) /tmp/cases.toml > /tmp/cases$k.toml
  /usr/bin/time -v timeout 25 ./cuth sweep ../../configs/mol_f2f.toml /tmp/cases$k.toml --grid 128x128 --device cuda --batch $k --out /tmp/s$k --json > "$L/cli_b$k.json" 2> "$L/cli_b$k.err"; echo "rc=$?" >> "$L/cli_b$k.err"
done
echo "total $(( $(date +%s) - T0 )) s" > "$L/total.txt"
tar czf "$OUT/run1.tgz" -C "$OUT" logs
