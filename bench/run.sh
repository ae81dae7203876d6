#!/usr/bin/env bash
# The one entry point of the benchmark drivers: runs a named benchmark and
# prints its table (markdown or aligned text, as BENCHMARKS.md quotes it).
# Usage: bench/run.sh NAME [ARGS...]     (no NAME: list the benchmarks)
#        bench/run.sh NAME --help        (the driver's own usage)
# Run from anywhere; each driver works from the repository root and uses
# target/release/cuth unless given another binary. Raw outputs go where the
# driver's usage says; keep the ones BENCHMARKS.md cites under benchmarks/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."

# name | driver | what it measures
benchmarks() {
    cat <<'LIST'
cpu|cpu.sh|CPU steady solve of mol_f2f per preconditioner and grid: [SIZES...]
mg|mg.sh|multigrid against Chebyshev/Jacobi: iterations, set-up, solve, memory: [CUTH] [OUT]
mg-graded|mg_graded.sh|size-graded multigrid on non-uniform grids, two binaries: NEW_CUTH OLD_CUTH
graded-vs-uniform|graded_vs_uniform.sh|graded package grid against the uniform grid of its cell count: CUTH
graded-table|graded_table.py|table of a graded-vs-uniform raw folder: DIR
transient|transient.sh|transient time and iterations per step, GPU and CPU: [CUTH] [OUT]
transient-schemes|compare_transient_schemes.py|accuracy per cost of transient runs against a reference: REF RUN... [--every S]
kt-transient|kt_transient.sh|temperature-dependent transient steps, binaries side by side: OUT CUTH [CUTH...]
kt-anderson|kt_anderson.sh|Picard against Anderson, steady and transient: MODE [CUTH] [OUT]
kt-modes|kt_transient_modes.sh|the k(T) transient example in six modes: CUTH OUT
kt-modes-compare|compare_kt_transient.py|two kt-modes folders mode by mode: BEFORE AFTER
sweep|sweep.sh|cuth sweep throughput on the CPU: [N] [GRID] [OUT] [REPS]
sweep-cases|sweep_cases.sh|write a sweep manifest of N cases for mol_f2f: N OUT.toml
serve|serve.py|cuth serve round trip (set power, step, read blocks): [--stack F] [--grid N] ...
topopt|topopt.sh|topology optimization on a GPU: tests, matvec, full runs: [STEP...]
topopt-table|topopt_table.py|table of cuth topopt runs of a folder: DIR
cupy|cupy.py|CuPy CG + Jacobi on systems exported by cuth bench --export: DIR [--rtol R]
mpi-ranks|mpi_ranks.sh|one steady solve over 1 then N MPI ranks (cuth built with --features mpi): [STACK] [GRID] [N...]
hotspot-example5|hotspot_example5_table.py|HotSpot example 5 (microchannels) table from a raw folder: DIR
hotspot-blocks|hotspot/compare.py|per-block hottest points, HotSpot .steady against cuth blocks.csv: LABEL=FILE...
hotspot-map|hotspot/mapdiff.py|a cuth layer map against a HotSpot grid_steady file: CUTH.csv HS.grid.steady LAYER
LIST
}

if [ $# -eq 0 ] || [ "$1" = --help ] || [ "$1" = -h ]; then
    echo "usage: bench/run.sh NAME [ARGS...]"
    echo "benchmarks (NAME: what it measures: its arguments):"
    benchmarks | awk -F'|' '{ printf "  %-18s %s\n", $1, $3 }'
    echo "GPU checks and benchmarks in one go: scripts/build_gpu.sh here, then scripts/gpu_all.sh there."
    [ $# -eq 0 ] && exit 2 || exit 0
fi
name=$1
shift
driver=$(benchmarks | awk -F'|' -v n="$name" '$1 == n { print $2 }')
[ -n "$driver" ] || { echo "bench/run.sh: no benchmark named '$name' (run without arguments for the list)" >&2; exit 2; }
case $driver in
    *.py) exec python3 "$here/$driver" "$@" ;;
    *) exec bash "$here/$driver" "$@" ;;
esac
