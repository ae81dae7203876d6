#!/usr/bin/env bash
# Runs one sweep as N shards in the background (one process per shard, each
# with --jobs J) and merges their tables: the way to spread a sweep over the
# GPUs of one host (set GPUS to give shard i CUDA_VISIBLE_DEVICES=i) or to
# test what a cluster array job does. Exit status: the merge's (1 when any
# case failed, 2 on bad input), or 1 when a shard could not run at all.
# Usage: scripts/sweep_shards.sh STACK CASES OUT N [extra cuth sweep args...]
#   e.g. bench/sweep_cases.sh 400 /tmp/cases.toml
#        scripts/sweep_shards.sh configs/mol_f2f.toml /tmp/cases.toml out/sweep 2 --device cpu --jobs 1
#   GPUS=1 scripts/sweep_shards.sh configs/mol_f2f.toml cases.toml out/sweep 4 --device cuda
# Env: CUTH (the binary, default target/release/cuth), GPUS=1 (one GPU per shard).
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -uo pipefail
stack=${1:?usage: sweep_shards.sh STACK CASES OUT N [args...]}
cases=${2:?}
out=${3:?}
n=${4:?}
shift 4
cuth=${CUTH:-target/release/cuth}
pids=()
for ((i = 0; i < n; i++)); do
    if [ "${GPUS:-0}" = 1 ]; then export CUDA_VISIBLE_DEVICES=$i; fi
    "$cuth" sweep "$stack" "$cases" --shard "$i/$n" --out "$out/shard$i" --quiet "$@" &
    pids+=($!)
done
status=0
for ((i = 0; i < n; i++)); do
    wait "${pids[$i]}"
    rc=$?
    # 1 = some case failed (its table is written); anything else: no table.
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
        echo "shard $i/$n failed (exit $rc)" >&2
        status=1
    fi
done
[ "$status" = 0 ] || exit "$status"
tables=()
for ((i = 0; i < n; i++)); do tables+=("$out/shard$i/sweep.csv"); done
"$cuth" sweep --merge "${tables[@]}" --out "$out/merged"
