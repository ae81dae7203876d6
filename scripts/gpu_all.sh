#!/usr/bin/env bash
# Every GPU check and benchmark in one go, for a GPU machine without a Rust
# toolchain. Build first, here, with scripts/build_gpu.sh, and carry
# target/release/cuth and target/release/deps/gpu-<hash> along.
#
#   bash scripts/gpu_all.sh            # from the repository root
#
# Steps (each logged to $LOG/<step>.log, each under its own timeout, all under
# one overall deadline, so the script ends in under ~8.5 minutes whatever
# hangs): nvidia-smi; `cuth info`; the ignored GPU tests (tests/gpu/backend.rs, tests/gpu/mixed.rs);
# `cuth solve configs/mol_f2f.toml` on cuda and on cpu; `cuth bench` with
# --export; bench/cupy.py on the exported systems; then a summary.
#
# Environment:
#   OUT             logs go to $OUT/gpu_all (default ./gpu_logs)
#   EXPORT_DIR      exported systems, GBs, NOT under $OUT (default /tmp/cuth_export)
#   DEADLINE_S      overall budget in seconds (default 500)
#   BENCH_ARGS      extra arguments for `cuth bench`
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -uo pipefail # no -e: every step runs; failures are collected and reported
cd "$(dirname "$0")/.."

LOG=${OUT:+$OUT/gpu_all}
LOG=${LOG:-$PWD/gpu_logs}
EXPORT_DIR=${EXPORT_DIR:-/tmp/cuth_export}
DEADLINE_S=${DEADLINE_S:-500}
START=$(date +%s)
mkdir -p "$LOG"
CUTH=./target/release/cuth

# Newest executable test binary of tests/gpu/.
GPU_TEST=""
for f in $(ls -t target/release/deps/gpu-* 2>/dev/null); do
    if [[ -f "$f" && -x "$f" && "$f" != *.d ]]; then
        GPU_TEST=$f
        break
    fi
done

STEPS=()
# step NAME CAP_SECONDS CMD...: runs CMD with a timeout of min(CAP, time left
# before the deadline), output to $LOG/NAME.log; records rc and seconds.
step() {
    local name=$1 cap=$2
    shift 2
    local left=$((DEADLINE_S - ($(date +%s) - START) - 5))
    local t=$((cap < left ? cap : left))
    if ((t <= 0)); then
        echo "== $name: skipped (deadline)"
        STEPS+=("$name|skipped|0")
        return
    fi
    echo "== $name (timeout ${t}s): $*"
    local t0=$(date +%s)
    timeout --kill-after=10 "$t" "$@" >"$LOG/$name.log" 2>&1
    local rc=$?
    local dt=$(($(date +%s) - t0))
    ((rc == 124)) && echo "   timed out after ${t}s"
    echo "   rc=$rc in ${dt}s; last lines:"
    tail -n 4 "$LOG/$name.log" | sed 's/^/   | /'
    STEPS+=("$name|$rc|$dt")
}

missing() {
    echo "== $1: skipped ($2)"
    echo "$2" >"$LOG/$1.log"
    STEPS+=("$1|missing|0")
}

step env 20 bash -c 'nvidia-smi; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv; uname -a; nproc; free -g'

if [[ -x $CUTH ]]; then
    step info 30 "$CUTH" info
else
    missing info "$CUTH not found: run scripts/build_gpu.sh and carry it"
fi

if [[ -n $GPU_TEST ]]; then
    step tests 150 "$GPU_TEST" --ignored --nocapture --test-threads=1 backend::
else
    missing tests "no executable target/release/deps/gpu-*: run scripts/build_gpu.sh and carry it"
fi

if [[ -n $GPU_TEST ]]; then
    step tests_mixed 90 "$GPU_TEST" --ignored --nocapture --test-threads=1 mixed::
fi

if [[ -x $CUTH ]]; then
    for dev in cuda cpu; do
        step "solve_$dev" 60 "$CUTH" solve configs/mol_f2f.toml --device "$dev" --out "$LOG/solve_$dev"
        step "solve512_$dev" 120 "$CUTH" solve configs/mol_f2f.toml --grid 512x512 --device "$dev" --json --out "/tmp/solve512_$dev"
    done
    # shellcheck disable=SC2086 # BENCH_ARGS is a word list by design
    step bench "${BENCH_CAP:-240}" "$CUTH" bench --out "$LOG/bench" --export "$EXPORT_DIR" ${BENCH_ARGS:---solve-budget-s 15 --cpu-budget-s 10}
fi

if [[ -d $EXPORT_DIR ]] && python3 -c 'import cupy' 2>/dev/null; then
    rm -f "$LOG/cupy.jsonl"
    step cupy "${CUPY_CAP:-100}" python3 bench/cupy.py "$EXPORT_DIR" --budget-s "${CUPY_BUDGET:-35}" --json "$LOG/cupy.jsonl"
else
    missing cupy "no exported systems in $EXPORT_DIR or no CuPy"
fi

# ------------------------------------------------------------------ summary
{
    echo
    echo "# gpu_all.sh summary ($(date -u +%FT%TZ), $(($(date +%s) - START)) s)"
    echo
    echo "| step | rc | s |"
    echo "|---|---|---:|"
    for s in "${STEPS[@]}"; do
        IFS='|' read -r n rc dt <<<"$s"
        echo "| $n | $rc | $dt |"
    done
    echo
    [[ -f $LOG/info.log ]] && sed -n '1,12p' "$LOG/info.log"
    if [[ -f $LOG/tests.log ]]; then
        echo
        grep -E '^test |test result|FAIL|panicked' "$LOG/tests.log" | head -40
        grep -E '^steady mol_f2f|^\[gpu\]' "$LOG/tests.log"
    fi
    echo
    python3 - "$LOG" <<'PY'
import json, sys, pathlib
log = pathlib.Path(sys.argv[1])
res = {}
for dev in ("cuda", "cpu"):
    p = log / f"solve512_{dev}.log"
    if p.is_file():
        try:
            s = json.loads(p.read_text())
            t = dict(s["timings_s"])
            print(f"solve512 {dev:<4}: {s['solver']['iterations']} iterations, solve {t['solve']:.3f} s, "
                  f"total {sum(t.values()):.3f} s, T max {s['hottest']['t_k']:.6f} K, "
                  f"true rel res {s['solver']['final_true_residual']:.1e}")
        except (ValueError, KeyError) as e:
            print(f"solve512 {dev}: unreadable ({e})")
for dev in ("cuda", "cpu"):
    p = log / f"solve_{dev}" / "summary.json"
    if not p.is_file():
        print(f"solve {dev}: no summary.json")
        continue
    s = json.loads(p.read_text())
    t = dict(s.get("timings_s", []))
    sol, g = s["solver"], s["grid"]
    res[dev] = s
    print(f"solve {dev:<4} {g['nx']}x{g['ny']}x{g['nz']}: {sol['precond']['name']}, "
          f"{sol['iterations']} iterations, true rel res {sol['final_true_residual']:.1e}, "
          f"T max {s['hottest']['t_k']:.4f} K, solve {t.get('solve', float('nan')):.3f} s, "
          f"device {s['device']['name']}")
if len(res) == 2:
    d = abs(res["cuda"]["hottest"]["t_k"] - res["cpu"]["hottest"]["t_k"])
    print(f"solve cuda vs cpu: |dT max| = {d:.2e} K")
PY
    if [[ -f $LOG/bench/bench.md ]]; then
        echo
        cat "$LOG/bench/bench.md"
    elif [[ -f $LOG/bench.log ]]; then
        echo
        grep '^bench:' "$LOG/bench.log" | tail -30
    fi
    if [[ -f $LOG/cupy.log ]]; then
        echo
        grep -E '^(CuPy|cupy-cg|numpy-cg)|Error' "$LOG/cupy.log"
    fi
} | tee "$LOG/summary.md"
