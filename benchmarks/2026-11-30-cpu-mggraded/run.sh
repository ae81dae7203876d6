#!/bin/bash
# Size-graded multigrid on non-uniform grids (BENCHMARKS.md, "Packages").
# usage: benchmarks/2026-11-30-cpu-mggraded/run.sh NEW_CUTH OLD_CUTH > results.txt
# (repository root; OLD_CUTH: a build of main before the change, e.g. 1055b7f)
set -u
NEW=$1; OLD=$2; HERE=$(dirname "$0")
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
for f in benchmarks/package/die_on_spreader.toml benchmarks/package/die_on_spreader_24mm.toml configs/hotspot_ev6_3d.toml configs/hbm_2p5d.toml; do
    for b in NEW OLD; do for r in 1 2 3; do line "${!b}" $b $f; done; done
done
echo "== 2 x 1.5 mm die in a 16 mm package (tests/package.rs geometry), refinement and aspect cap"
for spec in "200 um|-" "100 um|-" "50 um|-" "25 um|-" "12.5 um|-" "25 um|100 um" "25 um|400 um" "25 um|16 mm"; do
    cell=${spec%|*}; cap=${spec#*|}
    f=$(mktemp --suffix=.toml); python3 "$HERE/die_2x1p5_16mm.py" "$cell" "$cap" > "$f"
    for b in NEW OLD; do line "${!b}" $b "$f" ; done | sed "s|$f|cell $cell max_cell $cap|"
    rm -f "$f"
done
echo "== uniform grids: same results as before (maps compared byte for byte)"
for args in "configs/mol_f2f.toml --grid 64x64" "configs/hotspot_ev6_3d.toml --grid 100x90" "benchmarks/package/die_on_spreader.toml --grid 320x320"; do
    a=$(mktemp -d); c=$(mktemp -d)
    $NEW solve $args --device cpu --out $a >/dev/null 2>&1; $OLD solve $args --device cpu --out $c >/dev/null 2>&1
    echo "$args: $(diff -rq $a $c | grep -vc summary.json) differing output files besides summary.json"
    line $NEW NEW $args
    rm -rf $a $c
done
