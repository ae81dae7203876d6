#!/usr/bin/env bash
# Last check on the final main: every ignored GPU test, and cuth topopt,
# solve, transient through the CLI on cuda (incl. a mesh refused for device memory).
set -uo pipefail
T=target/release
{
timeout 100 $T/deps/gpu-805efcb48ab23794 --ignored --test-threads 1 2>&1 | grep -E "^test |test result|panicked"
timeout 40 $T/deps/gpu_mixed-ac2f7395d78b4c77 --ignored --test-threads 1 2>&1 | grep -E "^test |test result|panicked"
timeout 40 $T/deps/gpu_topopt-666734a37d45211f --ignored --test-threads 1 2>&1 | grep -E "^test |test result|panicked"
timeout 30 $T/cuth topopt cantilever --nelx 48 --device cuda --out /tmp/t48 --quiet; echo "topopt cuda rc=$?"; ls /tmp/t48 | tr '\n' ' '; echo
timeout 20 $T/cuth topopt cantilever --nelx 1300 --operator three-stage --device cuda --out /tmp/tbig --quiet; echo "topopt 275M three-stage cuda rc=$? (expect 1 or 2)"
timeout 20 $T/cuth solve configs/mol_f2f.toml --device cuda --out /tmp/s --quiet; echo "solve cuda rc=$?"
timeout 20 $T/cuth transient configs/hotspot_ev6_3d.toml --dt 1e-4 --t-end 0.02 --trace configs/hotspot/ev6_burst.csv --device cuda --out /tmp/tr --quiet; echo "transient cuda rc=$?"
} 2>&1 | tee $OUT/final_check.log
