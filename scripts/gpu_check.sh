#!/usr/bin/env bash
# Every GPU test plus the package, 2048², k(T), sweep and topopt
# checks of BENCHMARKS.md ("Current figures"), for a GPU machine
# without a Rust toolchain. Stage here with scripts/gpu_stage.sh, carry
# .gpu/main, run from the repo root: bash scripts/gpu_check.sh (logs: $OUT/main,
# tarred at the end). DEADLINE (s, default 280) bounds the whole run; BIG=1
# adds the 8192² solves and a 50 M-element topopt run (~2 min more; NO_C740=1 leaves the latter out).
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -u
B=${BIN:-.gpu/main/bin}; L=${OUT:-/tmp/out}/main; mkdir -p "$L"; W=/tmp/w; rm -rf $W; mkdir -p $W
# The test binaries find configs/ through their build path (CARGO_MANIFEST_DIR).
mkdir -p /work && ln -sfn "$PWD" /work/main
export CUTH_BIN=$PWD/$B/cuth  # tests that run the binary (gpu_kernel_cache)
T0=$(date +%s); DEADLINE=${DEADLINE:-280}
step() { local n=$1 t=$2; shift 2; local left=$((DEADLINE - ($(date +%s) - T0)))
  ((left < 5)) && { echo "== $n skipped" | tee -a $L/steps.txt; return; }; ((t > left)) && t=$left
  local s=$(date +%s%N); timeout "$t" "$@" > "$L/$n.log" 2>&1; local rc=$?
  echo "== $n rc=$rc $(( ($(date +%s%N) - s) / 1000000 )) ms :: $(grep -E '^test result' $L/$n.log | tail -1)" | tee -a $L/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/env.txt 2>&1
# One step per module of the GPU test binary, each under its own timeout.
for m in $($B/gpu --list --ignored 2>/dev/null | sed -n 's/^\([a-z_]*\)::.*: test$/\1/p' | sort -u); do
  step t_$m 60 $B/gpu --ignored --exact $($B/gpu --list --ignored 2>/dev/null | sed -n "s/^\($m::.*\): test$/\1/p") \
    --nocapture --test-threads=1
done
js() { step "$1" 40 $B/cuth solve "${@:2}" --json --no-maps --out $W/$1; }
js hbm_cuda configs/hbm_2p5d.toml --device cuda
js hbm_cpu configs/hbm_2p5d.toml --device cpu
CUTH_HOST_ASSEMBLY=1 js hbm_cuda_hostasm configs/hbm_2p5d.toml --device cuda
js ev6_cuda configs/hotspot_ev6_3d.toml --device cuda
js ev6_cpu configs/hotspot_ev6_3d.toml --device cpu
js ev6_cuda_cheb configs/hotspot_ev6_3d.toml --device cuda --precond chebyshev
js b24_cuda benchmarks/inputs/die_on_spreader_24mm.toml --device cuda
js b24_cuda_u480 benchmarks/inputs/die_on_spreader_24mm.toml --device cuda --grid 480x480
# Non-uniform grid against the uniform grid of the same cell count, at sizes
# that are not launch-bound (the per-cell target).
for c in 10:664 6:1101; do
  sed "s/^cell = \"50 um\"/cell = \"${c%:*} um\"/" benchmarks/inputs/die_on_spreader_24mm.toml > $W/b24_${c%:*}um.toml
  js b24_${c%:*}um $W/b24_${c%:*}um.toml --device cuda
  js b24_${c%:*}um_u${c#*:} $W/b24_${c%:*}um.toml --device cuda --grid ${c#*:}x${c#*:}
done
js m2048 configs/mol_f2f.toml --device cuda --grid 2048x2048
js m2048b configs/mol_f2f.toml --device cuda --grid 2048x2048
CUTH_STAGE_MIB=128 js m2048s128 configs/mol_f2f.toml --device cuda --grid 2048x2048
CUTH_NO_KERNEL_CACHE=1 js m2048nc configs/mol_f2f.toml --device cuda --grid 2048x2048
step m2048maps 40 $B/cuth solve configs/mol_f2f.toml --device cuda --grid 2048x2048 --json --out $W/m2048maps
js m4096 configs/mol_f2f.toml --device cuda --grid 4096x4096
js lin1024 configs/mol_f2f.toml --device cuda --grid 1024x1024
CUTH_HOST_ASSEMBLY=1 js m2048_hostasm configs/mol_f2f.toml --device cuda --grid 2048x2048
step tr_nl 30 $B/cuth transient configs/mol_f2f_kt.toml --grid 128x128 --device cuda --dt 1e-2 --steps 5 --nonlinear-iterations 20 --init steady --no-maps --json --out $W/tr
tr() { step "$1" 40 $B/cuth transient "${@:2}" --device cuda --grid 512x512 --dt 1e-2 --no-maps --json --out $W/$1; }
tr tr_lin512 configs/mol_f2f.toml --steps 20
tr tr_kt512 configs/mol_f2f_kt.toml --steps 20
tr tr_kt512_it configs/mol_f2f_kt.toml --steps 10 --nonlinear-iterations 20
step kt1024 40 $B/cuth solve configs/mol_f2f_kt.toml --grid 1024x1024 --device cuda --json --no-maps --out $W/kt
bash bench/sweep_cases.sh 10000 /tmp/cases10000.toml > /dev/null 2>&1
step sweep10000 40 $B/cuth sweep configs/mol_f2f.toml /tmp/cases10000.toml --grid 128x128 --device cuda --out $W/sw --json
tp() { step "$1" "$2" $B/cuth topopt "${@:3}" --device cuda --quiet --out $W/$1; cp $W/$1/summary.json $L/$1.summary.json 2>/dev/null; cp $W/$1/history.csv $L/$1.history.csv 2>/dev/null; }
tp c200 20 cantilever --nelx 200
tp torsion 20 torsion
tp c340 45 cantilever --nelx 340
if [[ -n ${BIG:-} ]]; then # the largest runs of BENCHMARKS.md
  step m8192 120 /usr/bin/time -v $B/cuth solve configs/mol_f2f.toml --device cuda --grid 8192x8192 --json --no-maps --out $W/m8192
  CUTH_STAGE_MIB=128 step m8192s128 120 /usr/bin/time -v $B/cuth solve configs/mol_f2f.toml --device cuda --grid 8192x8192 --json --no-maps --out $W/m8192s128
  [[ -z ${NO_C740:-} ]] && tp c740 260 cantilever --nelx 740
fi
python3 - "$L" <<'PY' | tee $L/table.txt
import json, sys, os, csv
L = sys.argv[1]
def j(n):
    try:
        t = open(f"{L}/{n}.log").read()
        return json.JSONDecoder().raw_decode(t[t.index("{"):])[0]
    except Exception as e: return None
for n in ["hbm_cuda","hbm_cpu","hbm_cuda_hostasm","ev6_cuda","ev6_cpu","ev6_cuda_cheb","b24_cuda","b24_cuda_u480","b24_10um","b24_10um_u664","b24_6um","b24_6um_u1101","m2048","m2048b","m2048s128","m2048nc","m2048maps","m4096","m2048_hostasm","lin1024","kt1024","m8192","m8192s128"]:
    s = j(n)
    if not s: print(n, "no json"); continue
    t = dict(s["timings_s"]); g = s["grid"]
    nonpcg = sum(t.values()) - t.get('solve', 0)
    cells = g['nx'] * g['ny'] * g['nz']; its = max(s['solver']['iterations'], 1)
    print(f"{n:18s} cells {cells} per cell per iteration {1e9 * t.get('solve', 0) / (cells * its):.3f} ns")
    print(f"{n:18s} non-PCG {nonpcg:.3f}s {g['nx']}x{g['ny']}x{g['nz']} it {s['solver']['iterations']:4d} Tmax {s['hottest']['t_k']:.9f} solve {t.get('solve',0):.3f}s total {sum(t.values()):.2f}s energy {s['energy']['relative_error']:.1e} " + " ".join(f"{k}={v:.3f}" for k,v in t.items() if k not in ('solve',)))
for a,b in [("hbm_cuda","hbm_cpu"),("ev6_cuda","ev6_cpu"),("hbm_cuda","hbm_cuda_hostasm"),("m2048","m2048_hostasm"),("m2048","m2048maps")]:
    sa, sb = j(a), j(b)
    if sa and sb: print(f"{a} vs {b}: |dTmax| = {abs(sa['hottest']['t_k']-sb['hottest']['t_k']):.2e} K")
for n in ["m2048","m2048b","m2048s128","m2048nc","m8192","m8192s128"]:
    s = j(n)
    if s: print(n, "detail", " ".join(f"{k}={v:.3f}" for k, v in s.get("timings_detail_s", []) if k.startswith(("device_init", "kernels", "download", "free", "upload"))))
for n in ["m8192", "m8192s128"]:
    try:
        rss = [l for l in open(f"{L}/{n}.log") if "Maximum resident" in l or "Elapsed (wall" in l]
        print(n, " ".join(x.strip() for x in rss))
    except Exception: pass
# Block statistics (blocks.csv), CUDA against CPU on the 129-block example.
try:
    rows = {n: list(csv.DictReader(open(f"/tmp/w/{n}/blocks.csv"))) for n in ("ev6_cuda", "ev6_cpu")}
    a, b = rows["ev6_cuda"], rows["ev6_cpu"]
    d = max(abs(float(x[k]) - float(y[k])) for x, y in zip(a, b) for k in x if k.startswith("t_"))
    print(f"ev6 blocks.csv cuda vs cpu: {len(a)}/{len(b)} blocks, same names {[(x['layer'], x['block']) for x in a] == [(y['layer'], y['block']) for y in b]}, max |dT| {d:.2e}")
except Exception as e: print("ev6 blocks.csv: not compared", e)
s = j("sweep10000")
if s: print("sweep10000:", {k: s[k] for k in s if k in ("cases","failed","cases_per_s","timings_s","batch")})
for n in ["tr_lin512", "tr_kt512", "tr_kt512_it"]:
    s = j(n)
    if s: print(f"{n:12s} steps {s['steps']} solve/step {s['solve_s_per_step']*1e3:.1f} ms wall/step {s['wall_s_per_step']*1e3:.1f} ms it/step {s['iterations_per_step_mean']:.1f} peak {s['peak_t_k']:.9f} timings {s['timings_s']}")
s = j("tr_nl")
if s: print("tr_nl:", s.get("nonlinear"), s.get("iterations_total"))
for n in ["c200","torsion","c340","c740"]:
    try:
        s = json.load(open(f"{L}/{n}.summary.json")); h = list(csv.DictReader(open(f"{L}/{n}.history.csv")))
        cg = [int(r["cg_iterations"]) for r in h]
        print(f"{n:8s} el {s['problem']['elements']} its {s['iterations']} wall {s['wall_s']:.2f}s CG/step mean {sum(cg)/len(cg):.1f} max {max(cg)} c {s['best']['compliance']:.5f} stop {s['stop']}")
    except Exception as e: print(n, "no summary", e)
PY
cd $L/.. && tar czf main_logs.tgz main && rm -rf main
