#!/usr/bin/env bash
# Transient steps with temperature-dependent terms, one or more binaries side
# by side (BENCHMARKS.md's git history, "One temperature-dependent step for every backend"):
# `cuth transient STACK --device $DEVICE --grid $GRID --dt 1e-2 --no-maps
# --json` from ambient, REPS runs of each case:
#   lin      configs/mol_f2f.toml, 20 steps
#   kt       configs/mol_f2f_kt.toml, 20 steps (semi-implicit)
#   kt_it    configs/mol_f2f_kt.toml, 10 steps --nonlinear-iterations 20
#   leak     mol_f2f with the logic raster leaking { p_ref 0.8, t_ref 358.15,
#            beta 0.017 }, no k law, 20 steps
#   claw     mol_f2f with silicon's c = 1.628e6 (T/300), no k law, 20 steps
# then once per binary: `--init steady` iterated at 128² (5 steps, `tr_nl`) and
# kt with CUTH_HOST_ASSEMBLY=1 (`kt<N>_hostasm`). Logs (the JSON summary on
# stdout) go to OUT/<binary name>_<case><N>_<rep>.log; a table (median solve
# and wall time per step, PCG iterations per step, outer iterations, peak,
# energy imbalance) to OUT/table.txt and stdout. Runs from the repository root.
#
#   bash bench/kt_transient.sh OUT CUTH [CUTH...]   # e.g. cuth cuth_main
#   bash bench/kt_transient.sh --table OUT           # the table only
#
# Env: DEVICE (default cuda), GRID (default 512x512), REPS (default 3),
# CAP_S (timeout per run, default 30).
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
table() { # OUT
    python3 - "$1" <<'PY' | tee "$1/table.txt"
import glob, json, os, re, sys
L = sys.argv[1]
def j(n):
    try:
        t = open(f"{L}/{n}.log").read(); return json.JSONDecoder().raw_decode(t[t.index("{"):])[0]
    except Exception: return None
logs = [os.path.basename(f)[:-4] for f in glob.glob(f"{L}/*.log")]
runs = {m.groups() for m in (re.match(r"(.+?)_((lin|kt|leak|claw)\d+(?:_it)?)_(\d+)$", n) for n in logs) if m}
order = ["lin", "kt", "kt_it", "leak", "claw"]
key = lambda c: order.index(re.sub(r"\d+", "", c))
cases = sorted({c for _, c, _, _ in runs}, key=key); bins = sorted({b for b, _, _, _ in runs})
for case in cases:
    for b in bins:
        ss = [j(f"{b}_{case}_{r}") for bb, c, _, r in sorted(runs, key=lambda g: g[3]) if c == case and bb == b]; ss = [s for s in ss if s]
        if not ss: print(f"{b:9s} {case:9s} no json"); continue
        sol = sorted(s['solve_s_per_step'] * 1e3 for s in ss); wal = sorted(s['wall_s_per_step'] * 1e3 for s in ss)
        s = ss[0]; nl = s.get('nonlinear') or {}
        print(f"{b:9s} {case:9s} solve/step ms {' '.join(f'{v:.1f}' for v in sol)} (median {sol[len(sol)//2]:.1f}) wall/step median {wal[len(wal)//2]:.1f} it/step {s['iterations_per_step_mean']:.2f} outer {nl.get('outer_iterations_total')} peak {s['peak_t_k']:.9f} imbalance {s['energy']['max_step_relative_imbalance']:.1e}")
for n in [f"{b}_tr_nl" for b in bins] + sorted(n for n in logs if n.endswith("_hostasm")):
    s = j(n)
    if s: print(f"{n:24s} peak {s['peak_t_k']:.9f} it {s['iterations_total']} outer {(s.get('nonlinear') or {}).get('outer_iterations_total')} solve/step {s['solve_s_per_step']*1e3:.1f} ms init {s['init']}")
    else: print(n, "no json")
PY
}
if [[ ${1:-} == --table ]]; then table "${2:?usage: bench/kt_transient.sh --table OUT}"; exit; fi
out=${1:?usage: bench/kt_transient.sh OUT CUTH [CUTH...]}; shift
(($#)) || { echo "usage: bench/kt_transient.sh OUT CUTH [CUTH...]" >&2; exit 2; }
DEVICE=${DEVICE:-cuda}; GRID=${GRID:-512x512}; REPS=${REPS:-3}; CAP_S=${CAP_S:-30}
N=${GRID%%x*}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
abs() { sed "s|\"\.\./powermaps/|\"$root/powermaps/|" "$@"; }
lin=$root/configs/mol_f2f.toml; kt=$root/configs/mol_f2f_kt.toml
abs "$lin" | sed 's|^\(power = { type = "raster", file = "[^"]*mol_logic.csv" }.*\)$|\1\nleakage = { p_ref = 0.8, t_ref = 358.15, beta = 0.017 }|' > "$tmp/leak.toml"
abs "$lin" | sed '/^\[materials.silicon\]/,/^heat_capacity/s/^heat_capacity = .*/heat_capacity = { c300 = 1.628e6, exponent = 1.0 }/' > "$tmp/claw.toml"
grep -q '^leakage = ' "$tmp/leak.toml" && grep -q 'c300 = 1.628e6' "$tmp/claw.toml" ||
    { echo "bench/kt_transient.sh: configs/mol_f2f.toml changed shape; leak/claw stacks not made" >&2; exit 2; }
run() { # log-name cuth args...
    local n=$1 b=$2; shift 2
    local s; s=$(date +%s%N)
    timeout "$CAP_S" "$b" transient "$@" --device "$DEVICE" --dt 1e-2 --no-maps --json --out "$tmp/o" > "$out/$n.log" 2>&1
    echo "== $n rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms" | tee -a "$out/steps.txt"
}
for ((r = 1; r <= REPS; r++)); do
    for b in "$@"; do
        l=$(basename "$b")
        run ${l}_lin${N}_$r "$b" "$lin" --grid "$GRID" --steps 20
        run ${l}_kt${N}_$r "$b" "$kt" --grid "$GRID" --steps 20
        run ${l}_kt${N}_it_$r "$b" "$kt" --grid "$GRID" --steps 10 --nonlinear-iterations 20
        run ${l}_leak${N}_$r "$b" "$tmp/leak.toml" --grid "$GRID" --steps 20
        run ${l}_claw${N}_$r "$b" "$tmp/claw.toml" --grid "$GRID" --steps 20
    done
done
for b in "$@"; do
    l=$(basename "$b")
    run ${l}_tr_nl "$b" "$kt" --grid 128x128 --steps 5 --nonlinear-iterations 20 --init steady
    CUTH_HOST_ASSEMBLY=1 run ${l}_kt${N}_hostasm "$b" "$kt" --grid "$GRID" --steps 20
done
table "$out"
