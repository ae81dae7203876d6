#!/usr/bin/env bash
# The test command: `cargo test --release`, with the `mpi` feature (and so
# the mpirun tests, tests/cli/mpi_ranks.rs) where Open MPI and libclang are
# installed, in the same single build. CUTH_REQUIRE_MPI=1 makes a missing
# MPI an error instead (CI sets it, after installing Open MPI).
# Usage: scripts/test.sh [cargo test arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --help ]; then
    sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
features=()
if command -v mpirun >/dev/null && command -v mpicc >/dev/null \
    && ldconfig -p 2>/dev/null | grep -q 'libclang'; then
    features=(--features mpi)
elif [ "${CUTH_REQUIRE_MPI:-0}" = 1 ]; then
    echo "scripts/test.sh: CUTH_REQUIRE_MPI=1 but mpirun, mpicc or libclang is missing" >&2
    exit 1
else
    echo "scripts/test.sh: no Open MPI and libclang here: the mpirun tests are not built" >&2
fi
exec cargo test --release "${features[@]}" "$@"
