#!/bin/bash
# Picard against Anderson, steady k(T) / leakage, CPU. Run from the repo root:
#   bash benchmarks/2026-11-30-cpu-anderson/run.sh [CUTH]
set -e
D=benchmarks/2026-11-30-cpu-anderson
CUTH=${1:-./target/release/cuth}
sed "s/P_REF/0.28/" $D/mol_f2f_kt_leak.template > $D/leak_0.28.toml
for rep in 1 2; do
  for a in 0 3; do
    $CUTH solve configs/mol_f2f_kt.toml --grid 512x512 --device cpu --anderson $a --out /tmp/b_kt --json > $D/kt512_a${a}_r$rep.json
  done
done
$CUTH solve configs/mol_f2f_kt.toml --grid 512x512 --device cpu --anderson 1 --out /tmp/b_kt --json > $D/kt512_a1_r1.json
for a in 0 1 3 5; do
  $CUTH solve $D/leak_0.28.toml --grid 256x256 --device cpu --anderson $a --out /tmp/b_leak --json > $D/leak256_a$a.json
done
$CUTH solve $D/leak_0.28.toml --grid 256x256 --device cpu --anderson 3 --nonlinear-tol 1e-9 --out /tmp/b_leak --json > $D/leak256_a3_tol1e-9.json
for a in 0 3; do
  $CUTH solve $D/leak_0.28.toml --grid 512x512 --device cpu --anderson $a --out /tmp/b_leak --json > $D/leak512_a$a.json
done
