#!/bin/bash
# No-GPU check of kernels/mg.cu's restriction and prolongation with an
# irregular (size-graded) aggregation: the kernels compiled by g++ through a
# shim (one block, threads run in turn) against a direct reference; and
# common.cu + mg.cu + batch.cu pass g++ -fsyntax-only. Not NVRTC: the real
# check is tests/gpu/mg.rs on a GPU (scripts/gpu_check.sh).
# Usage (repository root): bash scripts/mg_kernel_emu/run.sh
set -e
H=$(cd "$(dirname "$0")" && pwd); T=$(mktemp -d)
cat kernels/common.cu kernels/mg.cu kernels/batch.cu > "$T/kern.inc"
g++ -std=c++17 -fsyntax-only -I"$H" -I"$T" "$H/emu.cpp"
cat kernels/common.cu kernels/mg.cu > "$T/kern.inc"
g++ -std=c++17 -O1 -I"$H" -I"$T" "$H/emu.cpp" -o "$T/emu" && "$T/emu"
rm -rf "$T"
