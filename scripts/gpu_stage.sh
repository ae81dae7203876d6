#!/usr/bin/env bash
# Copies the release binary and the GPU test binary (tests/gpu/) into
# .gpu/main/bin for scripts/gpu_check.sh on the GPU machine (carry .gpu/main).
# Usage: bash scripts/gpu_stage.sh
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -euo pipefail
cd "$(dirname "$0")/.."
D=.gpu/main; rm -rf $D/bin; mkdir -p $D/bin
cargo build --release
cp target/release/cuth $D/bin/
cargo test --release --no-run 2>&1 | sed -n 's/.*Executable tests\/gpu\/main\.rs (\(.*\))$/\1/p' | while read p; do cp "$p" "$D/bin/gpu"; done
ls -la $D/bin; du -sh $D
