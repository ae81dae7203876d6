#!/usr/bin/env bash
# bigrun (issue 15) GPU checks + benchmarks, run from the repository root:
#   bash .gpu/bigrun/run.sh      (logs under $OUT/bigrun, tarred to $OUT/bigrun.tgz)
set -uo pipefail
B=.gpu/bigrun
L=${OUT:-/tmp}/bigrun
mkdir -p "$L"
W=/tmp/bigrun_out
rm -rf "$W"; mkdir -p "$W"
START=$(date +%s)
left() { echo $((280 - ($(date +%s) - START))); }
step() { # step NAME CAP CMD...
  local n=$1 cap=$2; shift 2
  local t=$(left); ((t > cap)) && t=$cap
  if ((t < 5)); then echo "== $n skipped (deadline)" | tee -a "$L/steps.txt"; return; fi
  local s=$(date +%s%N)
  timeout "$t" "$@" > "$L/$n.log" 2>&1; local rc=$?
  echo "== $n rc=$rc $(( ($(date +%s%N) - s) / 1000000 )) ms" | tee -a "$L/steps.txt"
}
nvidia-smi --query-gpu=name,memory.total,memory.free,driver_version --format=csv > "$L/nvidia-smi.txt" 2>&1
free -b > "$L/free.txt"; nproc >> "$L/free.txt"
step info 20 $B/cuth info
step gpu_assemble 60 $B/gpu_assemble --ignored --nocapture --test-threads=1
step gpu_steady 60 $B/gpu --ignored --nocapture --test-threads=1 steady
step gpu_mg 60 $B/gpu_mg --ignored --nocapture --test-threads=1 mg_solves
TV="/usr/bin/time -v"; [ -x /usr/bin/time ] || TV=""
run() { # run NAME CAP ARGS...
  local n=$1 cap=$2; shift 2
  step "$n" "$cap" $TV $B/cuth solve configs/mol_f2f.toml --device cuda --json --out "$W/$n" "$@"
  cp "$W/$n/summary.json" "$L/$n.summary.json" 2>/dev/null
  du -sb "$W/$n" >> "$L/sizes.txt" 2>/dev/null; rm -rf "$W/$n"
}
run s2048 40 --grid 2048x2048
CUTH_HOST_ASSEMBLY=1 run s2048_hostasm 40 --grid 2048x2048
run s4096 60 --grid 4096x4096
# The largest: 8192² (1.2 B cells) if the plan admits it, else the grid it names.
run big8192 200 --grid 8192x8192 --layers logic_feol --npy f32
G=$(grep -o 'largest grid that fits is --grid [0-9]*x[0-9]*' "$L/big8192.log" | awk '{print $NF}')
if [ -n "$G" ]; then
  echo "largest grid: $G" >> "$L/steps.txt"
  run big 200 --grid "$G" --layers logic_feol --npy f32
fi
cd "$L/.." && tar czf bigrun.tgz bigrun && echo tarred
