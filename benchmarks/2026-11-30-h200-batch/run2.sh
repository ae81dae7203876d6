#!/usr/bin/env bash
# GPU call 2 (final) of helper `batch`: correctness + benchmarks of the
# pipelined batched sweep. Logs under $OUT/logs, tarred into $OUT/run2.tgz.
set -x
OUT=${OUT:-/tmp/out}; L=$OUT/logs; mkdir -p "$L"
cd "$(dirname "$0")"
T0=$(date +%s)
./cuth info > "$L/info.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$L/nvidia_smi.csv" 2>&1
nproc > "$L/nproc.txt"
CUTH_CUDA_SYNC=1 timeout 40 ./gpu_sweep_batch --ignored --nocapture --test-threads=1 cuda_batched > "$L/tests_gpu_sweep_batch_equal.log" 2>&1; echo "rc=$?" >> "$L/tests_gpu_sweep_batch_equal.log"
timeout 45 ./gpu_sweep_batch --ignored --nocapture --test-threads=1 cuda_batch_rate > "$L/tests_gpu_sweep_batch_rate.log" 2>&1; echo "rc=$?" >> "$L/tests_gpu_sweep_batch_rate.log"
timeout 25 ./gpu_sweep --ignored --nocapture --test-threads=1 > "$L/tests_gpu_sweep.log" 2>&1; echo "rc=$?" >> "$L/tests_gpu_sweep.log"
bash ../../scripts/sweep_cases.sh 10000 /tmp/cases10000.toml
head -n 800 /tmp/cases10000.toml > /tmp/cases200.toml
head -n 4000 /tmp/cases10000.toml > /tmp/cases1000.toml
run() { # name cases args...
  local name=$1 cases=$2; shift 2
  /usr/bin/time -v timeout 30 ./cuth sweep ../../configs/mol_f2f.toml "$cases" --grid 128x128 --device cuda --out "/tmp/$name" --json "$@" > "$L/cli_$name.json" 2> "$L/cli_$name.err"
  echo "rc=$?" >> "$L/cli_$name.err"
  ls -R "/tmp/$name" | head -20 > "$L/cli_$name.files"
}
run b1_200 /tmp/cases200.toml --batch 1
for k in 16 32 64 128; do run b${k}_1000 /tmp/cases1000.toml --batch $k; done
run default_10000 /tmp/cases10000.toml
cp /tmp/default_10000/sweep.csv "$L/sweep_default_10000.csv" 2>/dev/null; gzip -f "$L/sweep_default_10000.csv"
echo "total $(( $(date +%s) - T0 )) s" > "$L/total.txt"
tar czf "$OUT/run2.tgz" -C "$OUT" logs
