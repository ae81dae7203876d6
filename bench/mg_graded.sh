#!/bin/bash
# Size-graded multigrid on non-uniform grids, one binary against another
# (BENCHMARKS.md's git history, "Size-graded multigrid coarsening"): `cuth solve --device cpu
# --precond mg --no-maps` on the graded shipped/benchmark stacks (3 runs each),
# the tests/solver/package.rs die at several cell sizes and aspect caps
# (bench/gen_die_in_package.py), and uniform grids compared file by file.
# One line per run on stdout (grid, PCG iterations, set-up and solve time,
# hottest cell, levels, hierarchy bytes over the fine matrix's).
#   bash bench/mg_graded.sh NEW_CUTH OLD_CUTH > OUT/results.txt
# (from the repository root; OLD_CUTH e.g. a build of main before a change)
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -u
NEW=${1:?usage: bench/mg_graded.sh NEW_CUTH OLD_CUTH}; OLD=${2:?usage: bench/mg_graded.sh NEW_CUTH OLD_CUTH}; HERE=$(dirname "$0")
line() { # bin label stack [args]
    local b=$1 label=$2 f=$3; shift 3
    local o; o=$(mktemp -d)
    "$b" solve "$f" --device cpu --precond mg --no-maps --out "$o" "$@" >/dev/null 2>"$o/err" || { echo "FAIL $label $f"; cat "$o/err"; }
    python3 - "$o/summary.json" "$label" "$f $*" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); t = dict(s['timings_s']); g = s['grid']
lv = s['solver']['precond']['multigrid']['levels']
print(f"{sys.argv[2]:4} {sys.argv[3]:55} {g['nx']}x{g['ny']}x{g['nz']} it {s['solver']['iterations']:4} "
      f"setup {t['precond_setup']:.3f} s solve {t['solve']:.3f} s Tmax {s['hottest']['t_k']:.4f} K levels {len(lv)} "
      f"hierarchy {s['solver']['precond']['params']['hierarchy_fraction']:.2f} of A")
PY
    rm -rf "$o"
}
echo "== shipped graded stacks, 3 runs each"
for f in benchmarks/inputs/die_on_spreader.toml benchmarks/inputs/die_on_spreader_24mm.toml configs/hotspot_ev6_3d.toml configs/hbm_2p5d.toml; do
    for b in NEW OLD; do for r in 1 2 3; do line "${!b}" $b $f; done; done
done
echo "== 2 x 1.5 mm die in a 16 mm package (tests/solver/package.rs geometry), refinement and aspect cap"
for spec in "200 um|-" "100 um|-" "50 um|-" "25 um|-" "12.5 um|-" "25 um|100 um" "25 um|400 um" "25 um|16 mm"; do
    cell=${spec%|*}; cap=${spec#*|}
    f=$(mktemp --suffix=.toml); python3 "$HERE/gen_die_in_package.py" "$cell" "$cap" > "$f"
    for b in NEW OLD; do line "${!b}" $b "$f" ; done | sed "s|$f|cell $cell max_cell $cap|"
    rm -f "$f"
done
echo "== uniform grids: same results as before (maps compared byte for byte)"
for args in "configs/mol_f2f.toml --grid 64x64" "configs/hotspot_ev6_3d.toml --grid 100x90" "benchmarks/inputs/die_on_spreader.toml --grid 320x320"; do
    a=$(mktemp -d); c=$(mktemp -d)
    $NEW solve $args --device cpu --out $a >/dev/null 2>&1; $OLD solve $args --device cpu --out $c >/dev/null 2>&1
    echo "$args: $(diff -rq $a $c | grep -vc summary.json) differing output files besides summary.json"
    line $NEW NEW $args
    rm -rf $a $c
done
