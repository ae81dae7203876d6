#!/usr/bin/env bash
# mgdev (issue 15: multigrid set-up on the device) GPU check, from the
# repository root:  bash .gpu/mgdev/run.sh   (logs tarred to $OUT/mgdev-logs.tar.gz)
# 1. device hierarchy == host's (gpu_mg_setup), mg kernels/cycle/solves vs CPU
#    (gpu_mg), kernel families compile, steady/PCG vs CPU (gpu);
# 2. cuth solve mol_f2f --no-maps at 2048², 4096², 8192² with peak RSS.
set -uo pipefail
B=.gpu/mgdev
L=/tmp/mgdev; rm -rf "$L"; mkdir -p "$L"; W=/tmp/mgdev_out; rm -rf "$W"; mkdir -p "$W"
T0=$(date +%s); BUDGET=${BUDGET:-225}
pack() { tar -C /tmp -czf "${OUT:-/tmp}/mgdev-logs.tar.gz" mgdev; }
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
step() { local n=$1 t=$2; shift 2; local l=$(left); [ "$t" -gt "$l" ] && t=$l
  if [ "$t" -le 2 ]; then echo "== $n skipped (time)" | tee -a "$L/steps.txt"; return; fi
  local s=$(date +%s%N); timeout "$t" "$@" > "$L/$n.log" 2>&1; local rc=$?
  echo "== $n rc=$rc $(( ($(date +%s%N) - s) / 1000000 )) ms" | tee -a "$L/steps.txt"; pack; }
TV=""; [ -x /usr/bin/time ] && TV="/usr/bin/time -v"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$L/gpu.txt" 2>&1
step info 20 $B/cuth info
step gpu_mg_setup 40 $B/gpu_mg_setup --ignored --nocapture --test-threads=1
step gpu_mg 30 $B/gpu_mg --ignored --nocapture --test-threads=1
step gpu 30 $B/gpu --ignored --nocapture --test-threads=1 kernels_compile pcg_matches steady_mol_f2f
for g in 2048 4096 8192; do
  step s$g 150 $TV $B/cuth solve configs/mol_f2f.toml --device cuda --json --no-maps --grid ${g}x${g} --out "$W/s$g"
  rm -rf "$W/s$g"
done
grep -E "test result|max rel diff|it, cuda" "$L"/gpu*.log >> "$L/steps.txt"
for g in 2048 4096 8192; do f="$L/s$g.log"; [ -f "$f" ] || continue
  echo "s$g: $(grep -E '"iterations"|host_peak_rss|Maximum resident|Elapsed' "$f" | tr -s ' ' | tr '\n' ' ')" >> "$L/steps.txt"
  grep -A40 '"timings_s"' "$f" | tr -d ' \n' | sed "s/^/s$g timings: /;s/$/\n/" >> "$L/steps.txt"; done
pack; cat "$L/steps.txt"
