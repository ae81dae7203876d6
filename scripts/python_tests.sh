#!/usr/bin/env bash
# The Python package's tests: builds python/ from source into a virtual
# environment (.venv-py, git-ignored; kept between runs) with pytest and
# numpy, then runs python/tests/ against target/release/cuth (built first
# if missing). python/ is a member of the cargo workspace, so the build
# reuses target/ and the cuth crate compiled there by `cargo build
# --release` / `cargo test --release`.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-py
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check --quiet)
"${PIP[@]}" install pytest numpy
"${PIP[@]}" install ./python
[ -x target/release/cuth ] || cargo build --release --quiet
CUTH_BIN="$PWD/target/release/cuth" "$VENV/bin/python" -m pytest -q python/tests "$@"
