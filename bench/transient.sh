#!/usr/bin/env bash
# Transient benchmark: time per step and PCG iterations per step of
# `cuth transient configs/mol_f2f.toml` at 512² and 2048², --dt 1e-4 and 1e-2,
# on cuda and cpu, read from each run's summary.json. Runs from ambient (the
# first steps are the hardest: the power has just been switched on).
#
#   bash bench/transient.sh [CUTH] [OUT]
#
# Environment: DEVICES (default "cuda cpu"), GRIDS (default "512 2048"),
# DTS (default "1e-4 1e-2"), STEPS_<DEVICE>_<GRID> (steps per run, defaults
# below: the CPU at 2048² is slow), CAP_S (timeout per run, default 120).
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -uo pipefail
cd "$(dirname "$0")/.."
cuth=${1:-target/release/cuth}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
DEVICES=${DEVICES:-cuda cpu}
GRIDS=${GRIDS:-512 2048}
DTS=${DTS:-1e-4 1e-2}
CAP_S=${CAP_S:-120}
STEPS_cuda_512=${STEPS_cuda_512:-20}
STEPS_cuda_2048=${STEPS_cuda_2048:-10}
STEPS_cpu_512=${STEPS_cpu_512:-10}
STEPS_cpu_2048=${STEPS_cpu_2048:-1}

printf '%-6s %-6s %-6s %5s %12s %12s %12s %10s\n' device grid dt steps "solve s/step" "wall s/step" "iters/step" "max iters"
for dev in $DEVICES; do
    for g in $GRIDS; do
        var="STEPS_${dev}_${g}"
        steps=${!var:-5}
        for dt in $DTS; do
            dir="$out/${dev}_${g}_${dt}"
            if timeout "$CAP_S" "$cuth" transient configs/mol_f2f.toml --grid "${g}x${g}" \
                --device "$dev" --dt "$dt" --steps "$steps" --no-maps --quiet --out "$dir" \
                2> "$dir.err"; then
                python3 - "$dir/summary.json" "$dev" "$g" "$dt" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:<6} {sys.argv[3]:<6} {sys.argv[4]:<6} {s['steps']:5d} "
      f"{s['solve_s_per_step']:12.4e} {s['wall_s_per_step']:12.4e} "
      f"{s['iterations_per_step_mean']:12.1f} {s['iterations_per_step_max']:10d}")
PY
            else
                echo "$dev $g $dt: failed or timed out after ${CAP_S}s: $(tail -c 300 "$dir.err")"
            fi
        done
    done
done
