#!/usr/bin/env bash
# kcache (issue 15): GPU test of the kernel cache, then 2048² mol_f2f with a
# fresh cache (cold), twice warm, once warm with --device auto, once cache off.
# Run from the repo root: bash .gpu/kcache/run.sh ; logs in one tar under $OUT.
set -u
B=$PWD/.gpu/kcache; L=${OUT:-/tmp/out}/kcache; mkdir -p "$L"; W=/tmp/kw; rm -rf $W; mkdir -p $W
mkdir -p /work && ln -sfn "$PWD" /work/wt-kcache   # the test finds configs/ by its build path
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/env.txt 2>&1
s=$(date +%s%N)
CUTH_BIN=$B/cuth timeout 70 $B/gpu_kernel_cache --ignored --nocapture --test-threads=1 > $L/t_gpu_kernel_cache.log 2>&1
echo "t_gpu_kernel_cache rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms :: $(grep -E '^test result' $L/t_gpu_kernel_cache.log)" | tee -a $L/steps.txt
C=$W/cache
run() { local n=$1; shift; local s=$(date +%s%N)
  local dev="--device cuda"; [[ $n == *auto* ]] && dev=""
  env "$@" timeout 30 $B/cuth solve configs/mol_f2f.toml $dev --grid 2048x2048 --json --no-maps --out $W/$n > $L/$n.log 2> $L/$n.err
  echo "$n rc=$? wall_ms=$(( ($(date +%s%N) - s) / 1000000 ))" | tee -a $L/steps.txt; }
run m2048_cold CUTH_CACHE_DIR=$C
for n in m2048_warm1 m2048_warm2; do run $n CUTH_CACHE_DIR=$C; done
# auto: the probe runs beside the stack load instead of on the init thread
run m2048_auto_warm CUTH_CACHE_DIR=$C
run m2048_off CUTH_NO_KERNEL_CACHE=1
CUTH_CACHE_DIR=$C $B/cuth info > $L/info.txt 2>&1; ls -la $C >> $L/info.txt
python3 - "$L" <<'PY' | tee $L/table.txt
import json, sys
L = sys.argv[1]
walls = dict(l.split()[0:3:2] for l in open(f"{L}/steps.txt") if "wall_ms" in l)
for n in ["m2048_cold", "m2048_warm1", "m2048_warm2", "m2048_auto_warm", "m2048_off"]:
    try:
        t = open(f"{L}/{n}.log").read(); s = json.JSONDecoder().raw_decode(t[t.index("{"):])[0]
    except Exception as e: print(n, "no json", e); continue
    t = dict(s["timings_s"]); d = dict(s["timings_detail_s"])
    print(f"{n:16s} {walls.get(n,'?')} it {s['solver']['iterations']} Tmax {s['hottest']['t_k']:.12f} PCG {t.get('solve',0):.3f}s non-PCG {sum(t.values())-t.get('solve',0):.3f}s sum {sum(t.values()):.3f}s")
    print("   phases: " + " ".join(f"{k}={v:.3f}" for k, v in t.items()))
    print("   kernels: " + " ".join(f"{k}={v:.4f}" for k, v in d.items() if k.startswith("kernels/")))
PY
tar -C "${OUT:-/tmp/out}" -cf "${OUT:-/tmp/out}/kcache.tar" kcache && rm -rf "$L"
