#!/usr/bin/env bash
# mggraded GPU check (< 60 s): CUDA multigrid with the size-graded hierarchy
# (per-axis maps in device memory, restrict/prolong kernels reading them)
# against the CPU, on the graded shipped stacks and the 24 mm package; the
# mg kernel unit tests (incl. an irregular aggregation), the graded solve test
# and the batched sweep test (bq_mg kernels changed too). Logs under $OUT.
# Usage (device machine, repository root): bash .gpu/mggraded/run.sh
set -u
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/mggraded_out}
mkdir -p "$OUT"
./cuth info > "$OUT/info.txt" 2>&1
summ() { # file label
python3 - "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); t = dict(s["timings_s"]); g = s["grid"]; it = s["solver"]["iterations"]
lv = s["solver"]["precond"]["multigrid"]["levels"]
print(f"{sys.argv[2]:<16} {g['nx']}x{g['ny']}x{g['nz']} {s['device']['name'][:20]:<20} "
      f"iters {it:3d} Tmax {s['hottest']['t_k']:.6f} K setup {t['precond_setup']*1e3:7.2f} ms "
      f"solve {t['solve']*1e3:8.2f} ms levels {len(lv)} energy {s['energy']['relative_error']:.1e}")
PY
}
one() { # label args...
  local label=$1; shift
  if timeout 20 ./cuth solve "$@" --precond mg --no-maps --json --out "$OUT/run_$label" > "$OUT/$label.json" 2> "$OUT/$label.err"; then
    summ "$OUT/$label.json" "$label"
  else
    echo "$label: FAILED rc=$? $(tail -2 "$OUT/$label.err")"
  fi
}
{
one hbm_cuda configs/hbm_2p5d.toml --device cuda
one hbm_cpu configs/hbm_2p5d.toml --device cpu
one ev6_cuda configs/hotspot_ev6_3d.toml --device cuda
one ev6_cpu configs/hotspot_ev6_3d.toml --device cpu
one pkg24_cuda bench/die_on_spreader_24mm.toml --device cuda
one pkg24_cpu bench/die_on_spreader_24mm.toml --device cpu
one mol1024_cuda configs/mol_f2f.toml --device cuda --grid 1024x1024
for t in "gpu_mg" "gpu_sweep_batch cuda_batched_cases_equal_their_own_solves"; do
  timeout 30 ./$t --ignored --test-threads=1 > "$OUT/${t%% *}.log" 2>&1
  echo "$t rc=$? $(grep -E '^test result' "$OUT/${t%% *}.log")"
  grep -E "max rel diff|cpu .* it, cuda|FAILED|panicked" "$OUT/${t%% *}.log" | head -30
done
} 2>&1 | tee "$OUT/summary.txt"
rm -rf "$OUT"/run_*
