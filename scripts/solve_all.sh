#!/usr/bin/env bash
# Solves every shipped config through the CLI at a small grid, as a user's CI
# would: checks the exit code, that summary.json exists and that the energy
# balance closes. Usage: scripts/solve_all.sh [GRID] [CUTH]
#   GRID  in-plane grid override (default 64x64; a stack with a 4RM cavity,
#         whose channels fix its cells across the flow, keeps its own)
#   CUTH  the cuth binary (default: target/release/cuth, built if missing)
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -euo pipefail
grid=${1:-64x64}
cuth=${2:-target/release/cuth}
cd "$(dirname "$0")/.."
[ -x "$cuth" ] || cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for cfg in configs/*.toml; do
    name=$(basename "$cfg" .toml)
    # A 4RM cavity fixes the cells across its channels: its own grid.
    over=(--grid "$grid")
    grep -q '^model = "4rm"' "$cfg" && over=()
    if "$cuth" solve "$cfg" "${over[@]}" --device cpu --out "$out/$name" --quiet; then
        python3 - "$out/$name/summary.json" "$name" <<'PY' || status=1
import json, sys
s = json.load(open(sys.argv[1]))
e, sol = s["energy"], s["solver"]
print(f"{sys.argv[2]:<20} {s['grid']['nx']}x{s['grid']['ny']}x{s['grid']['nz']}  "
      f"Tmax {s['hottest']['t_k'] - 273.15:8.3f} C  iters {sol['iterations']:5d}  "
      f"residual {sol['final_true_residual']:.2e}  energy err {e['relative_error']:.1e}")
ok = sol["converged"] and e["relative_error"] < 1e-6 and sol["final_true_residual"] <= sol["rtol"] * 10
sys.exit(0 if ok else 1)
PY
    else
        echo "$name: cuth solve failed" >&2
        status=1
    fi
done
# The shipped transient example: a CSV workload trace on the ev6 stack.
if "$cuth" transient configs/hotspot_ev6_3d.toml --grid "$grid" --device cpu --dt 1e-3 \
    --t-end 0.02 --trace configs/hotspot/ev6_burst.csv --out "$out/ev6_transient" --quiet; then
    python3 - "$out/ev6_transient/summary.json" <<'PY' || status=1
import json, sys
s = json.load(open(sys.argv[1]))
e = s["energy"]
print(f"{'ev6 transient':<20} {s['steps']} steps of {s['dt_s']:g} s  Tpeak {s['peak_t_k'] - 273.15:8.3f} C  "
      f"iters/step {s['iterations_per_step_mean']:.1f}  worst step imbalance {e['max_step_relative_imbalance']:.1e}")
sys.exit(0 if e["max_step_relative_imbalance"] < 1e-6 and s["steps"] == 20 else 1)
PY
else
    echo "ev6 transient: cuth transient failed" >&2
    status=1
fi
exit $status
