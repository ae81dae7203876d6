#!/usr/bin/env bash
# The shipped k(T) transient example in six modes, for comparing two builds
# field by field (BENCHMARKS.md's git history, "One temperature-dependent step for every
# backend", CPU): configs/mol_f2f_kt.toml at its own grid (64x64x18), Δt 1e-2,
# `--no-maps --json --save-state`:
#   semi   20 steps, semi-implicit         it     10 steps, --nonlinear-iterations 20
#   its    5 steps, iterated, --init steady  sst   5 steps, --init steady
#   lsemi / lit: 10 steps, semi-implicit / iterated, with the per-cell leakage
#          { p_ref 0.8, t_ref 358.15, beta 0.017 } on the logic raster
# Writes OUT/<mode>.json, OUT/<mode>.state, OUT/<mode>/timeseries.csv; then
#   python3 bench/compare_kt_transient.py BEFORE_OUT AFTER_OUT
#
#   bash bench/kt_transient_modes.sh CUTH OUT      (env DEVICE, default cpu)
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
B=${1:?usage: kt_transient_modes.sh CUTH OUT}; O=${2:?usage: kt_transient_modes.sh CUTH OUT}
C=$root/configs/mol_f2f_kt.toml
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; L=$tmp/leak_kt.toml
sed -e "s|\"\.\./powermaps/|\"$root/powermaps/|" \
    -e 's|^\(power = { type = "raster", file = "[^"]*mol_logic.csv" }.*\)$|\1\nleakage = { p_ref = 0.8, t_ref = 358.15, beta = 0.017 }|' "$C" > "$L"
grep -q '^leakage = ' "$L" || { echo "kt_transient_modes.sh: no logic raster line in $C" >&2; exit 2; }
mkdir -p "$O"
r() { n=$1; shift; "$B" transient "$@" --device "${DEVICE:-cpu}" --dt 1e-2 --no-maps --json --out "$O/$n" --save-state "$O/$n.state" > "$O/$n.json"; echo "$n rc=$?"; }
r semi "$C" --steps 20
r it "$C" --steps 10 --nonlinear-iterations 20
r its "$C" --steps 5 --nonlinear-iterations 20 --init steady
r sst "$C" --steps 5 --init steady
r lsemi "$L" --steps 10
r lit "$L" --steps 10 --nonlinear-iterations 20
