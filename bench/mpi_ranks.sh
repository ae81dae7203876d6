#!/usr/bin/env bash
# One steady solve over 1, then N MPI ranks (cuth built with --features mpi),
# one rayon thread a rank, and what each printed: iterations, solve time
# (the slowest rank's PCG loop), halo bytes and reductions per iteration.
# Usage: bench/run.sh mpi-ranks [STACK] [GRID] [N...]
#   e.g. bench/run.sh mpi-ranks configs/mol_f2f.toml 512x512 2
# Env: CUTH (default target/release/cuth), OUT (default /tmp/cuth-mpi-ranks).
set -euo pipefail
stack=${1:-configs/mol_f2f.toml}
grid=${2:-512x512}
shift $(($# < 2 ? $# : 2))
ranks=("${@:-2}")
cuth=${CUTH:-target/release/cuth}
out=${OUT:-/tmp/cuth-mpi-ranks}
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
for n in 1 "${ranks[@]}"; do
    echo "== $n rank(s): $stack --grid $grid"
    /usr/bin/time -f "wall %e s, max RSS of one process %M KB" \
        mpirun "${root[@]}" -n "$n" -x RAYON_NUM_THREADS=1 "$cuth" solve "$stack" \
        --grid "$grid" --device cpu --no-maps --out "$out/$n" --verbose --quiet
    python3 - "$out/$n/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("iterations", s["solver"]["iterations"], "precond", s["solver"]["precond"]["name"],
      "true residual %.2e" % s["solver"]["final_true_residual"])
print("timings_s", {k: round(v, 3) for k, v in s["timings_s"]})
print("hottest %.9f K" % s["hottest"]["t_k"] if "t_k" in s["hottest"] else s["hottest"])
PY
done
