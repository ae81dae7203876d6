#!/usr/bin/env bash
# Multigrid benchmark: PCG iterations, preconditioner set-up and
# PCG solve time (from each run's summary.json `timings_s`), and the
# hierarchy's memory, for --precond mg against chebyshev (and jacobi), on
# the shipped stacks and the stress stack of tests/data/stress_mg, then the
# transient per-step time of mol_f2f. Maps are written to a scratch folder
# and deleted; each run's summary.json is kept under OUT.
#
#   bash bench/mg.sh [CUTH] [OUT]
#
# Environment: DEVICE (cpu or cuda, default cpu); MG_SIZES (default
# "64 128 256 512 1024"), CHEB_SIZES (default "64 128 256"), JACOBI_SIZES
# (default none): grids n (n x n) per preconditioner; CONFIGS (default the
# two shipped stacks and the stress stack); TRANSIENT_GRID (default 512,
# empty = skip), TRANSIENT_STEPS (default 20), TRANSIENT_DTS (default 1e-2);
# CAP_S (timeout per run, default 300); SCRATCH (default a temp dir).
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cuth=${1:-$here/target/release/cuth}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
DEVICE=${DEVICE:-cpu}
MG_SIZES=${MG_SIZES:-64 128 256 512 1024}
CHEB_SIZES=${CHEB_SIZES:-64 128 256}
JACOBI_SIZES=${JACOBI_SIZES:-}
CONFIGS=${CONFIGS:-configs/mol_f2f.toml configs/hotspot_ev6_3d.toml tests/data/stress_mg/stress.toml}
TRANSIENT_GRID=${TRANSIENT_GRID-512}
TRANSIENT_STEPS=${TRANSIENT_STEPS:-20}
TRANSIENT_DTS=${TRANSIENT_DTS:-1e-2}
CAP_S=${CAP_S:-300}
scratch=${SCRATCH:-$(mktemp -d)}

echo "# cuth bench_mg: device $DEVICE, $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n)"
printf '%-16s %-10s %6s %11s %5s %9s %9s %9s %12s %6s\n' stack precond grid cells iters setup_s solve_s wall_s hier_MiB frac
run_one() { # config precond n
    local cfg=$1 pc=$2 n=$3 name dir t0 t1
    name=$(basename "$cfg" .toml)
    dir="$out/${name}_${pc}_${n}"
    mkdir -p "$dir"
    t0=$(date +%s.%N)
    if timeout "$CAP_S" "$cuth" solve "$cfg" --grid "${n}x${n}" --device "$DEVICE" \
        --precond "$pc" --json --out "$scratch/run" > "$dir/summary.json" 2> "$dir/stderr.txt"; then
        t1=$(date +%s.%N)
        python3 - "$dir/summary.json" "$name" "$pc" "$n" "$t0" "$t1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = dict(s["timings_s"])
g = s["grid"]
p = s["solver"]["precond"]["params"]
hier = p.get("hierarchy_bytes", 0) / 2**20
frac = p.get("hierarchy_fraction", 0)
cells = g["nx"] * g["ny"] * g["nz"]
wall = float(sys.argv[6]) - float(sys.argv[5])
print(f"{sys.argv[2]:<16} {sys.argv[3]:<10} {sys.argv[4]:>6} {cells:11d} "
      f"{s['solver']['iterations']:5d} {t['precond_setup']:9.3f} {t['solve']:9.3f} "
      f"{wall:9.2f} {hier:12.1f} {frac:6.2f}")
PY
    else
        echo "$name $pc $n: failed or timed out after ${CAP_S}s: $(tail -c 300 "$dir/stderr.txt")"
    fi
    rm -rf "$scratch/run"
}
for cfg in $CONFIGS; do
    for n in $MG_SIZES; do run_one "$cfg" mg "$n"; done
    for n in $CHEB_SIZES; do run_one "$cfg" chebyshev "$n"; done
    for n in $JACOBI_SIZES; do run_one "$cfg" jacobi "$n"; done
done

if [ -n "$TRANSIENT_GRID" ]; then
    echo
    printf '%-10s %6s %6s %5s %12s %12s %10s %9s\n' precond grid dt steps "solve s/step" "wall s/step" iters/step setup_s
    for dt in $TRANSIENT_DTS; do
    for pc in mg chebyshev; do
        dir="$out/transient_${pc}_${TRANSIENT_GRID}_${dt}"
        mkdir -p "$dir"
        if timeout "$CAP_S" "$cuth" transient configs/mol_f2f.toml --grid "${TRANSIENT_GRID}x${TRANSIENT_GRID}" \
            --device "$DEVICE" --precond "$pc" --dt "$dt" --steps "$TRANSIENT_STEPS" \
            --no-maps --quiet --out "$scratch/tr" 2> "$dir/stderr.txt"; then
            cp "$scratch/tr/summary.json" "$dir/summary.json"
            python3 - "$dir/summary.json" "$pc" "$TRANSIENT_GRID" "$dt" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = dict(s["timings_s"])
print(f"{sys.argv[2]:<10} {sys.argv[3]:>6} {sys.argv[4]:>6} {s['steps']:5d} "
      f"{s['solve_s_per_step']:12.4e} {s['wall_s_per_step']:12.4e} "
      f"{s['iterations_per_step_mean']:10.1f} {t.get('setup', float('nan')):9.3f}")
PY
        else
            echo "transient $pc $dt: failed or timed out after ${CAP_S}s: $(tail -c 300 "$dir/stderr.txt")"
        fi
        rm -rf "$scratch/tr"
    done
    done
fi
