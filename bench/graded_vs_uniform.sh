#!/bin/bash
# die_on_spreader_24mm on a graded grid (cell cap
# 100/50/10/6 um) against the uniform grid of the same cell count, mg,
# rtol 1e-8, two runs each (relaxed_work: a build without it prints its level work).
# FINEST=1 adds the uniform grid of the smallest cell (24 mm / cap: the grid
# the graded one stands in for; 4000² at 6 um, 96 M cells).
# Usage (repository root; DEVICE=cuda on a GPU):
#   bash bench/graded_vs_uniform.sh target/release/cuth > OUT/results.txt
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -u
B=${1:?usage: bench/graded_vs_uniform.sh CUTH}; W=$(mktemp -d); DEVICE=${DEVICE:-cpu}
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg) nproc $(nproc)"
for c in 100:80:240 50:144:480 10:664:2400 6:1101:4000; do
  IFS=: read -r cap same finest <<< "$c"
  sed "s/^cell = \"50 um\"/cell = \"$cap um\"/" benchmarks/inputs/die_on_spreader_24mm.toml > $W/b.toml
  grids=(graded uniform); [ "${FINEST:-0}" = 1 ] && grids+=(finest)
  for r in 1 2; do
    for g in "${grids[@]}"; do
      extra=(); [ $g = uniform ] && extra=(--grid ${same}x${same}); [ $g = finest ] && extra=(--grid ${finest}x${finest})
      $B solve $W/b.toml --device $DEVICE --json --no-maps --out $W/o "${extra[@]}" > /dev/null || { echo "FAILED $c $g"; continue; }
      python3 - $W/o/summary.json "${cap}um" $g $r <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = d['solver']; t = dict(d['timings_s']); p = s['precond']
n = d['grid']['cells']; it = s['iterations']; lv = p['multigrid']['levels']
work = sum(l['nx'] * l['ny'] for l in lv) / (lv[0]['nx'] * lv[0]['ny'])
print(f"{sys.argv[2]:6s} {sys.argv[3]:8s} run {sys.argv[4]} cells {n} it {it} pcg_s {t['solve']:.4f} "
      f"setup_s {t['precond_setup']:.4f} total_s {sum(t.values()):.4f} ns_cell_it {t['solve'] / n / it * 1e9:.2f} level_work {work:.3f} "
      f"relaxed_work {p['params'].get('relaxed_work', work):.3f} "
      f"hierarchy_fraction {p['params']['hierarchy_fraction']:.3f} hierarchy_bytes {p['multigrid']['hierarchy_bytes']} "
      f"levels {'/'.join(str(l['nx']) for l in lv)} tmax {d['hottest']['t_k']:.6f}")
PY
    done
  done
done
rm -rf $W
