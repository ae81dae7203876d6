#!/usr/bin/env bash
# trunify's GPU check (run from the repo root, carry .gpu/trunify): the three
# temperature-dependent GPU test binaries, then gpu_check.sh's transient
# benchmarks at 512² (tr_lin512, tr_kt512 semi-implicit, tr_kt512_it
# iterated) plus leakage-only and c(T)-only variants, this branch's `cuth`
# against main's (`cuth_main`, 95f1a1d), 3 runs each, and the 128² steady
# start (tr_nl) and a host-assembled k(T) run. Logs under $OUT/trunify.
set -u
D=$(dirname "$0"); L=${OUT:-/tmp/out}/trunify; mkdir -p "$L"; W=/tmp/w; rm -rf $W; mkdir -p $W
mkdir -p /work && ln -sfn "$PWD" /work/main && ln -sfn "$PWD" /work/wt-trunify
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/env.txt 2>&1
T0=$(date +%s)
step() { local n=$1 t=$2; shift 2; local s=$(date +%s%N); timeout "$t" "$@" > "$L/$n.log" 2>&1; local rc=$?
  echo "== $n rc=$rc $(( ($(date +%s%N) - s) / 1000000 )) ms :: $(grep -E '^test result' $L/$n.log | tail -1)" | tee -a $L/steps.txt; }
for t in gpu_kt_device gpu_nonlinear gpu_transient_device; do
  step t_$t 60 $D/$t --ignored --nocapture --test-threads=1
done
L2=configs/_trunify_leak.toml; L3=configs/_trunify_claw.toml
sed 's|file = "../powermaps/mol_logic.csv" }|file = "../powermaps/mol_logic.csv" }\nleakage = { p_ref = 0.8, t_ref = 358.15, beta = 0.017 }|' configs/mol_f2f.toml > $L2
sed '62s/.*/heat_capacity = { c300 = 1.628e6, exponent = 1.0 }/' configs/mol_f2f.toml > $L3
tr() { local b=$1 n=$2; shift 2; step $n 30 $D/$b transient "$@" --device cuda --grid 512x512 --dt 1e-2 --no-maps --json --out $W/$n; }
for r in 1 2 3; do for b in cuth cuth_main; do
  tr $b ${b}_lin512_$r configs/mol_f2f.toml --steps 20
  tr $b ${b}_kt512_$r configs/mol_f2f_kt.toml --steps 20
  tr $b ${b}_kt512_it_$r configs/mol_f2f_kt.toml --steps 10 --nonlinear-iterations 20
  tr $b ${b}_leak512_$r $L2 --steps 20
  tr $b ${b}_claw512_$r $L3 --steps 20
done; done
for b in cuth cuth_main; do
  step ${b}_tr_nl 30 $D/$b transient configs/mol_f2f_kt.toml --grid 128x128 --device cuda --dt 1e-2 --steps 5 --nonlinear-iterations 20 --init steady --no-maps --json --out $W/${b}_nl
  CUTH_HOST_ASSEMBLY=1 tr $b ${b}_kt512_hostasm configs/mol_f2f_kt.toml --steps 20
done
rm -f $L2 $L3
echo "total $(( $(date +%s) - T0 )) s" | tee -a $L/steps.txt
python3 - "$L" <<'PY' | tee $L/table.txt
import json, sys, glob, os
L = sys.argv[1]
def j(n):
    try:
        t = open(f"{L}/{n}.log").read(); return json.JSONDecoder().raw_decode(t[t.index("{"):])[0]
    except Exception: return None
for case in ["lin512", "kt512", "kt512_it", "leak512", "claw512"]:
    for b in ["cuth", "cuth_main"]:
        ss = [j(f"{b}_{case}_{r}") for r in (1, 2, 3)]; ss = [s for s in ss if s]
        if not ss: print(f"{b:9s} {case:9s} no json"); continue
        sol = sorted(s['solve_s_per_step'] * 1e3 for s in ss); wal = sorted(s['wall_s_per_step'] * 1e3 for s in ss)
        s = ss[0]; nl = s.get('nonlinear') or {}
        print(f"{b:9s} {case:9s} solve/step ms {' '.join(f'{v:.1f}' for v in sol)} (median {sol[len(sol)//2]:.1f}) wall/step median {wal[len(wal)//2]:.1f} it/step {s['iterations_per_step_mean']:.2f} outer {nl.get('outer_iterations_total')} peak {s['peak_t_k']:.9f} imbalance {s['energy']['max_step_relative_imbalance']:.1e}")
for n in ["cuth_tr_nl", "cuth_main_tr_nl", "cuth_kt512_hostasm", "cuth_main_kt512_hostasm"]:
    s = j(n)
    if s: print(f"{n:24s} peak {s['peak_t_k']:.9f} it {s['iterations_total']} outer {(s.get('nonlinear') or {}).get('outer_iterations_total')} solve/step {s['solve_s_per_step']*1e3:.1f} ms init {s['init']}")
    else: print(n, "no json")
PY
