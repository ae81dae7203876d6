#!/usr/bin/env bash
# Builds, on this machine (no GPU needed), what scripts/gpu_all.sh runs on the
# GPU machine, which has no Rust toolchain: the release binary and the test
# binaries. Prints the paths to carry (the `carry` list of the device run) and
# the command to run there.
#   Usage: scripts/build_gpu.sh
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release
# --no-run prints "Executable tests/gpu/main.rs (target/release/deps/gpu-<hash>)".
log=$(cargo test --release --no-run 2>&1 | tee /dev/stderr)
gpu_test=$(printf '%s\n' "$log" | sed -n 's/.*Executable tests\/gpu\/main\.rs (\(.*\))$/\1/p' | tail -1)
if [[ -z "$gpu_test" || ! -x "$gpu_test" ]]; then
    echo "build_gpu.sh: could not find the gpu test binary in cargo's output" >&2
    exit 1
fi
size() { du -h "$1" | cut -f1; }
echo
echo "Binaries to carry to the GPU machine:"
echo "  target/release/cuth    ($(size target/release/cuth))"
echo "  $gpu_test    ($(size "$gpu_test"))"
echo
echo "carry: [\"target/release/cuth\", \"$gpu_test\"]"
echo "command: bash scripts/gpu_all.sh"
