#!/usr/bin/env bash
# A cuth sweep on a Slurm cluster: one array task per shard, one GPU per
# task, then a merge job that waits for every shard.
#
#   examples/slurm_sweep.sh submit STACK CASES OUT N [cuth sweep args...]
#
# submits `--array=0-(N-1)` tasks of this script in `shard` mode and a
# dependent `merge` job (afterany: a shard with a failed case exits 1 but has
# written its table). Each task runs
#
#   cuth sweep STACK CASES --shard I/N --out OUT/shardI --device D [args...]
#
# with I = SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN and
# N = SLURM_ARRAY_TASK_COUNT, and the merge runs
# `cuth sweep --merge OUT/shard*/sweep.csv --out OUT/merged`.
#
# The device D: CUTH_DEVICE when set (e.g. cpu); else `cuda:0` when
# CUDA_VISIBLE_DEVICES names a GPU (Slurm's --gres=gpu:1 sets it to the
# task's own GPU, and CUDA numbers the visible GPUs from 0, so the task's GPU
# is cuda:0 whatever its index on the node); else cpu. Give the device by
# CUTH_DEVICE, not as a --device argument.
#
# Env: CUTH (the cuth binary, default `cuth` on PATH), CUTH_DEVICE,
# GPUS_PER_TASK (default 1; 0 for a CPU-only sweep), SBATCH_ARGS (extra
# sbatch options for both jobs, e.g. "--partition=gpu --time=01:00:00").
# The shard and merge modes also run without Slurm when the SLURM_ARRAY_*
# variables are set by hand (tests/cli/slurm_sweep.rs runs them so).
set -euo pipefail
cuth=${CUTH:-cuth}
mode=${1:?usage: slurm_sweep.sh submit|shard|merge ...}
shift

device() {
    if [ -n "${CUTH_DEVICE:-}" ]; then
        echo "$CUTH_DEVICE"
    elif [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && [ "$CUDA_VISIBLE_DEVICES" != NoDevFiles ]; then
        echo cuda:0
    else
        echo cpu
    fi
}

case "$mode" in
submit)
    stack=${1:?usage: slurm_sweep.sh submit STACK CASES OUT N [args...]}
    cases=${2:?}
    out=${3:?}
    n=${4:?}
    shift 4
    gpus=${GPUS_PER_TASK:-1}
    gres=()
    mkdir -p "$out"
    if [ "$gpus" -gt 0 ]; then gres=(--gres="gpu:$gpus"); fi
    # Word splitting of SBATCH_ARGS is intended (several options).
    # shellcheck disable=SC2086
    jid=$(sbatch --parsable ${SBATCH_ARGS:-} --job-name=cuth-sweep --array="0-$((n - 1))" \
        "${gres[@]}" --output="$out/slurm-%A_%a.out" "$0" shard "$stack" "$cases" "$out" "$@")
    jid=${jid%%;*}
    # shellcheck disable=SC2086
    sbatch --parsable ${SBATCH_ARGS:-} --job-name=cuth-sweep-merge \
        --dependency="afterany:$jid" --output="$out/slurm-merge-%j.out" "$0" merge "$out"
    echo "shards: job $jid (array 0-$((n - 1))), merge after it into $out/merged" >&2
    ;;
shard)
    stack=${1:?usage: slurm_sweep.sh shard STACK CASES OUT [args...]}
    cases=${2:?}
    out=${3:?}
    shift 3
    n=${SLURM_ARRAY_TASK_COUNT:?not in a Slurm array task}
    i=$((${SLURM_ARRAY_TASK_ID:?not in a Slurm array task} - ${SLURM_ARRAY_TASK_MIN:-0}))
    exec "$cuth" sweep "$stack" "$cases" --shard "$i/$n" --out "$out/shard$i" \
        --device "$(device)" --quiet "$@"
    ;;
merge)
    out=${1:?usage: slurm_sweep.sh merge OUT}
    exec "$cuth" sweep --merge "$out"/shard*/sweep.csv --out "$out/merged"
    ;;
*)
    echo "slurm_sweep.sh: unknown mode \`$mode\` (submit, shard or merge)" >&2
    exit 2
    ;;
esac
