#!/usr/bin/env bash
# Concurrency check: N runs (default 50) of `cuth solve` (°C and
# --kelvin) and `cuth transient` (with snapshots) mixed, all at once into one
# --out. Every run must exit 0, or fail saying the folder was locked; while
# they run, the folder is sampled under the same advisory lock the runs take
# (flock(1) on the directory) and must always hold exactly one complete run's
# outputs; at the end likewise, with no staging directory left.
#
#   scripts/concurrent_out.sh [N] [GRID]      (build first: cargo build --release)
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -u
N=${1:-50}
GRID=${2:-8x8}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CUTH=${CUTH:-$ROOT/target/release/cuth}
WORK=$(mktemp -d)
OUT=$WORK/out
mkdir -p "$OUT"
trap 'rm -rf "$WORK"' EXIT

check() { # prints "ok <kind>" or "BAD <reason>"; $1 = folder
python3 - "$1" <<'PY'
import os, re, sys, json
d = sys.argv[1]
names = [n for n in sorted(os.listdir(d)) if not n.startswith(".cuth-")]
if not names: print("ok empty"); sys.exit()
maps = [n for n in names if re.match(r"^\d\d_.*\.(png|csv)$", n)]
if "timeseries.csv" in names:
    want = {"final", "snapshots", "summary.json", "temperature.png", "timeseries.csv"}
    ok = set(names) == want and not maps and "dt_s" in json.load(open(f"{d}/summary.json"))
    fin = sorted(os.listdir(f"{d}/final")) if ok else []
    ok = ok and len(fin) == 21  # mol_f2f: 10 maps x (png, csv) + summary.json (raster power: no block tables)
    print("ok transient" if ok else f"BAD transient set {names}")
else:
    rest = set(names) - set(maps)
    ok = rest == {"summary.json"} and len(maps) == 20
    units = set()
    for m in maps:
        if m.endswith(".csv"):
            # Map CSVs open with `#` comment lines (axes, units): skip them.
            with open(f"{d}/{m}") as f:
                row = next(l for l in f if not l.startswith("#"))
            v = float(row.split(",")[0])
            units.add("K" if v > 200 else "C")
    ok = ok and len(units) == 1 and "dt_s" not in json.load(open(f"{d}/summary.json"))
    print(f"ok solve-{units.pop()}" if ok else f"BAD solve set {names} units {units}")
PY
}

pids=()
for i in $(seq 1 "$N"); do
  case $((i % 3)) in
    0) args=(solve "$ROOT/configs/mol_f2f.toml" --kelvin) ;;
    1) args=(solve "$ROOT/configs/mol_f2f.toml") ;;
    2) args=(transient "$ROOT/configs/mol_f2f.toml" --dt 1e-3 --steps 4 --snapshot-every 2) ;;
  esac
  "$CUTH" "${args[@]}" --grid "$GRID" --device cpu -q --out "$OUT" \
    >"$WORK/run$i.out" 2>"$WORK/run$i.err" &
  pids+=($!)
done

samples=0; bad=0
while kill -0 "${pids[@]}" 2>/dev/null; do
  r=$(flock -w 120 "$OUT" bash -c "$(declare -f check); check '$OUT'")
  samples=$((samples + 1))
  case $r in BAD*) bad=$((bad + 1)); echo "sample $samples: $r" ;; esac
  sleep 0.2
done

ok=0; locked=0; failed=0
for i in $(seq 1 "$N"); do
  wait "${pids[$((i - 1))]}"; rc=$?
  if [ $rc -eq 0 ]; then ok=$((ok + 1))
  elif grep -q "locked by another cuth run" "$WORK/run$i.err"; then locked=$((locked + 1))
  else failed=$((failed + 1)); echo "run $i: exit $rc: $(cat "$WORK/run$i.err")"; fi
done
final=$(check "$OUT")
left=$(find "$OUT" -maxdepth 1 -name '.cuth-*' ! -name .cuth-run.json | wc -l)
echo "runs: $N (exit 0: $ok, lock reported: $locked, other failures: $failed)"
echo "folder sampled under the lock: $samples times, inconsistent: $bad"
echo "final folder: $final; staging left: $left"
[ $failed -eq 0 ] && [ $bad -eq 0 ] && [ "$left" -eq 0 ] && [[ $final == ok* ]]
