#!/usr/bin/env bash
# Picard against Anderson for the temperature-dependent outer iteration, CPU
# (BENCHMARKS.md, "Temperature-dependent stacks"; the transient modes in
# BENCHMARKS.md's git history, "Anderson inside iterated transient steps"). Stacks: configs/mol_f2f_kt.toml
# and leak_P.toml, the same with a per-cell leakage on the logic FEOL raster
# { p_ref = P, t_ref = 358.15, beta = 0.05 } (P = $P_REF, default 0.28: close
# below thermal runaway), written into OUT. One JSON summary per run in OUT.
#
#   bash bench/kt_anderson.sh MODE [CUTH] [OUT]
#     steady      512² mol_f2f_kt --anderson 0/3 (2 reps) and 1; leak at 256²
#                 --anderson 0/1/3/5 (+ 3 with --nonlinear-tol 1e-9) and 512² 0/3
#     transient   128², Δt 1e-2, 20 steps from ambient: semi-implicit
#                 (--nonlinear-iterations 0) against iterated (20), plus the
#                 iterated reference at Δt 1e-3 (200 steps); keeps timeseries.csv
#     transient-anderson
#                 iterated steps (20) at 128², Δt 1e-2 / 1e-1 (20 steps) and
#                 10 s (5 steps, 60 iterations, leak only), --anderson 0 and 3
# Env: GRID (overrides every grid, e.g. GRID=32x32 for a quick try), P_REF.
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:?usage: bench/kt_anderson.sh steady|transient|transient-anderson [CUTH] [OUT]}
cuth=${2:-$root/target/release/cuth}
out=${3:-benchmarks/$(date -u +%F)-cpu-anderson}
p=${P_REF:-0.28}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kt=$root/configs/mol_f2f_kt.toml
leak=$out/leak_$p.toml
{
    echo "# mol_f2f_kt with a per-cell leakage on the logic FEOL raster (beta = 0.05 /K),"
    echo "# p_ref = $p; written by bench/kt_anderson.sh"
    sed -e "s|\"\.\./powermaps/|\"$root/powermaps/|" \
        -e "s|^\(power = { type = \"raster\", file = \"[^\"]*mol_logic.csv\" }.*\)$|\1\nleakage = { p_ref = $p, t_ref = 358.15, beta = 0.05 }|" "$kt"
} > "$leak"
grep -q '^leakage = ' "$leak" || { echo "bench/kt_anderson.sh: no logic raster line in $kt" >&2; exit 2; }
g() { echo "${GRID:-$1}"; }
solve() { # name stack grid args...
    local n=$1 s=$2 grid=$3; shift 3
    "$cuth" solve "$s" --grid "$(g "$grid")" --device cpu --out "$tmp/o" --json "$@" > "$out/$n.json"
}
trans() { # name stack args...
    local n=$1 s=$2; shift 2
    "$cuth" transient "$s" --grid "$(g 128x128)" --device cpu --init ambient --no-maps --out "$tmp/$n" --json "$@" > "$out/$n.json"
}
b=leak_$p
case $mode in
steady)
    for rep in 1 2; do for a in 0 3; do solve kt512_a${a}_r$rep "$kt" 512x512 --anderson $a; done; done
    solve kt512_a1_r1 "$kt" 512x512 --anderson 1
    for a in 0 1 3 5; do solve leak256_a$a "$leak" 256x256 --anderson $a; done
    solve leak256_a3_tol1e-9 "$leak" 256x256 --anderson 3 --nonlinear-tol 1e-9
    for a in 0 3; do solve leak512_a$a "$leak" 512x512 --anderson $a; done
    ;;
transient)
    for s in "$kt" "$leak"; do
        n=$(basename "$s" .toml)
        for it in 0 20; do
            trans tr128_${n}_n$it "$s" --dt 1e-2 --steps 20 --nonlinear-iterations $it
            cp "$tmp/tr128_${n}_n$it/timeseries.csv" "$out/tr128_${n}_n$it.timeseries.csv"
        done
        trans tr128_${n}_fine "$s" --dt 1e-3 --steps 200 --nonlinear-iterations 20
    done
    ;;
transient-anderson)
    for s in "$kt" "$leak"; do
        n=$(basename "$s" .toml)
        for dt in 1e-2 1e-1; do for a in 0 3; do
            trans tr128_${n}_dt${dt}_a$a "$s" --dt $dt --steps 20 --nonlinear-iterations 20 --anderson $a
        done; done
    done
    # Near steady state on the near-runaway case: Picard's contraction factor
    # approaches 1 within a step.
    for a in 0 3; do trans tr128_${b}_dt10_a$a "$leak" --dt 10 --steps 5 --nonlinear-iterations 60 --anderson $a; done
    ;;
*) echo "bench/kt_anderson.sh: unknown mode $mode" >&2; exit 2 ;;
esac
