#!/usr/bin/env bash
# Sweep throughput on the CPU: N mol_f2f cases at GRID through
# `cuth sweep` with --jobs 1 and 2 (REPS times each), against one `cuth solve`
# process per case (the way before `sweep`, 20 cases). Logs and summaries go
# to OUT. Usage: bench/sweep.sh [N] [GRID] [OUT] [REPS]
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -euo pipefail
n=${1:-400}
grid=${2:-64x64}
out=${3:-benchmarks/$(date -u +%F)-cpu-sweep}
reps=${4:-2}
cd "$(dirname "$0")/.."
cuth=target/release/cuth
[ -x "$cuth" ] || cargo build --release --quiet
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench/sweep_cases.sh "$n" "$tmp/cases.toml"
{
    echo "date: $(date -u +%FT%TZ)  host: $(nproc) cores, $(uname -m)  grid: $grid  cases: $n"
    for ((r = 1; r <= reps; r++)); do
        for j in 1 2; do
            load=$(cut -d' ' -f1 /proc/loadavg)
            /usr/bin/time -f "%U %S %e" -o "$tmp/time" "$cuth" sweep configs/mol_f2f.toml \
                "$tmp/cases.toml" --grid "$grid" --device cpu --jobs "$j" --out "$tmp/s$j" --quiet
            cp "$tmp/s$j/summary.json" "$out/summary_jobs${j}_rep$r.json"
            read -r u s e < "$tmp/time"
            python3 - "$tmp/s$j/summary.json" "$j" "$r" "$load" "$u" "$s" "$e" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
j, r, load, u, sy, e = sys.argv[2:]
print(f"sweep jobs={j} rep={r} load={load}: {s['solved']}/{s['cases']} solved, "
      f"{s['cases_per_s']:.1f} cases/s (solve {s['solve_s']:.2f} s, set-up {s['setup_s']:.3f} s), "
      f"process wall {e} s, cpu {float(u) + float(sy):.2f} s = {1000 * (float(u) + float(sy)) / s['cases']:.1f} ms/case")
PY
        done
    done
    load=$(cut -d' ' -f1 /proc/loadavg)
    t0=$(date +%s.%N)
    for i in $(seq 1 20); do
        "$cuth" solve configs/mol_f2f.toml --grid "$grid" --device cpu --out "$tmp/one" --quiet
    done
    t1=$(date +%s.%N)
    python3 -c "print(f'one cuth solve process per case (20, load={$load}): {20 / ($t1 - $t0):.1f} cases/s')"
} | tee "$out/log.txt"
