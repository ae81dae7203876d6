#!/usr/bin/env bash
# The topology-optimization GPU checks and benchmarks in one go, for a GPU
# machine without a Rust toolchain (build here first: `cargo build --release`
# and `cargo test --release --no-run`, then carry the binaries).
#
#   bash bench/topopt.sh [STEP...]     # steps: env tests matvec opt (default: all)
#
# Steps, each logged to $LOG/<step>.log under its own timeout and all under
# one deadline:
#   env     nvidia-smi
#   tests   the ignored GPU tests of tests/gpu/topopt.rs (every operator kind
#           and precision against a host reference)
#   matvec  `cuth bench --topopt` (matvec time and effective bandwidth of every
#           schedule at 40³ … 170³ elements, next to the same run's copy bandwidth)
#   opt     full optimizations with `cuth topopt` (cantilever, patch load, at
#           nelx 120 / 200 / 252 = 216k / 1M / 2M elements; torsion at its
#           default 165×55×55 = 499k): wall time, outer and CG iterations and
#           final compliance from summary.json. Skipped, with a note, when this
#           cuth has no `topopt` subcommand.
#
# Environment:
#   CUTH        the cuth binary (default ./target/release/cuth)
#   TOPO_TEST   the tests/gpu/ binary (default: newest
#               target/release/deps/gpu-*)
#   OUT         logs go to $OUT/topopt (default ./topopt_logs)
#   DEADLINE_S  overall budget, s (default 540)
#   MATVEC_ARGS extra arguments for `cuth bench --topopt` (e.g. --reps 20)
#   OPT_CASES   the optimization runs, ';'-separated argument lists (default
#               the four above); OPT_ARGS is appended to each
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -uo pipefail # no -e: every step runs; failures are collected
cd "$(dirname "$0")/.."

LOG=${OUT:+$OUT/topopt}
LOG=${LOG:-$PWD/topopt_logs}
DEADLINE_S=${DEADLINE_S:-540}
START=$(date +%s)
CUTH=${CUTH:-./target/release/cuth}
mkdir -p "$LOG"
if [[ -z ${TOPO_TEST:-} ]]; then
    for f in $(ls -t target/release/deps/gpu-* 2>/dev/null); do
        if [[ -f $f && -x $f && $f != *.d ]]; then
            TOPO_TEST=$f
            break
        fi
    done
fi
STEPS_WANTED=${*:-env tests matvec opt}
RESULTS=()

left() { echo $((DEADLINE_S - ($(date +%s) - START) - 5)); }

# step NAME CAP CMD...: CMD with timeout min(CAP, time left), output to
# $LOG/NAME.log; records rc and seconds.
step() {
    local name=$1 cap=$2
    shift 2
    local l t
    l=$(left)
    t=$((cap < l ? cap : l))
    if ((t <= 0)); then
        echo "== $name: skipped (deadline)"
        RESULTS+=("$name|skipped|0")
        return 1
    fi
    echo "== $name (timeout ${t}s): $*"
    local t0
    t0=$(date +%s.%N)
    timeout --kill-after=10 "$t" "$@" >"$LOG/$name.log" 2>&1
    local rc=$?
    local dt
    dt=$(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")
    ((rc == 124)) && echo "   timed out after ${t}s"
    echo "   rc=$rc in ${dt}s; last lines:"
    tail -n 3 "$LOG/$name.log" | sed 's/^/   | /'
    RESULTS+=("$name|$rc|$dt")
}

wanted() { [[ " $STEPS_WANTED " == *" $1 "* ]]; }

wanted env && step env 20 bash -c 'nvidia-smi; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv'

if wanted tests; then
    if [[ -n ${TOPO_TEST:-} ]]; then
        step tests "${TESTS_CAP:-150}" "$TOPO_TEST" --ignored --nocapture --test-threads=1 topopt::
    else
        echo "== tests: skipped (no gpu_topopt test binary)"
        RESULTS+=("tests|missing|0")
    fi
fi

if wanted matvec; then
    # shellcheck disable=SC2086 # MATVEC_ARGS is a word list by design
    step matvec "${MATVEC_CAP:-200}" "$CUTH" bench --topopt --out "$LOG/matvec" ${MATVEC_ARGS:-}
fi

if wanted opt; then
    if "$CUTH" topopt --help >/dev/null 2>&1; then
        IFS=';' read -r -a CASES <<<"${OPT_CASES:-cantilever --load patch --nelx 120;cantilever --load patch --nelx 200;cantilever --load patch --nelx 252;torsion}"
        i=0
        for c in "${CASES[@]}"; do
            i=$((i + 1))
            dir=/tmp/topopt_run_$i
            rm -rf "$dir"
            # shellcheck disable=SC2086 # each case is a word list by design
            step "opt$i" "${OPT_CAP:-240}" "$CUTH" topopt $c --device cuda --out "$dir" ${OPT_ARGS:-}
            [[ -f $dir/summary.json ]] && cp "$dir/summary.json" "$LOG/opt${i}_summary.json"
            [[ -f $dir/history.csv ]] && cp "$dir/history.csv" "$LOG/opt${i}_history.csv"
            echo "$c" >"$LOG/opt${i}_case.txt"
        done
    else
        echo "== opt: skipped ($CUTH has no topopt subcommand yet)"
        RESULTS+=("opt|skipped (no cuth topopt)|0")
    fi
fi

# ------------------------------------------------------------------ summary
{
    echo
    echo "# bench/topopt.sh summary ($(date -u +%FT%TZ), $(($(date +%s) - START)) s)"
    echo
    echo "| step | rc | s |"
    echo "|---|---|---:|"
    for s in "${RESULTS[@]}"; do
        IFS='|' read -r n rc dt <<<"$s"
        echo "| $n | $rc | $dt |"
    done
    if [[ -f $LOG/tests.log ]]; then
        echo
        grep -E '^test |test result|panicked|^\[gpu\]' "$LOG/tests.log" | head -40
    fi
    if [[ -f $LOG/matvec/topopt.md ]]; then
        echo
        cat "$LOG/matvec/topopt.md"
    fi
    python3 - "$LOG" <<'PY'
import json, pathlib, sys
log = pathlib.Path(sys.argv[1])
rows = []
def find(d, *names):
    """First value under any of `names`, searched depth-first."""
    if isinstance(d, dict):
        for n in names:
            if n in d and not isinstance(d[n], (dict, list)):
                return d[n]
        for v in d.values():
            r = find(v, *names)
            if r is not None:
                return r
    return None
for p in sorted(log.glob("opt*_summary.json")):
    i = p.name.split("_")[0]
    case = (log / f"{i}_case.txt").read_text().strip() if (log / f"{i}_case.txt").exists() else "?"
    s = json.loads(p.read_text())
    rows.append((case, find(s, "elements"), find(s, "wall_s", "total_s", "seconds", "time_s"),
                 find(s, "outer_iterations", "iterations"), find(s, "cg_iterations", "total_cg_iterations"),
                 find(s, "compliance", "final_compliance")))
if rows:
    print("\n| case | elements | wall s (summary) | outer it. | CG it. | compliance |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| " + " | ".join("—" if v is None else str(v) for v in r) + " |")
    print("\n(step wall times, including start-up and output writing, are in the table above)")
PY
} | tee "$LOG/summary.md"
