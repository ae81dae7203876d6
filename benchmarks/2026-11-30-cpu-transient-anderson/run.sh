#!/bin/bash
# Iterated transient steps (--nonlinear-iterations 20): plain Picard
# (--anderson 0) against Anderson(3) (the default), CPU, 128², 20 steps of
# Δt from ambient: bash benchmarks/2026-11-30-cpu-transient-anderson/run.sh [CUTH]
set -e
D=benchmarks/2026-11-30-cpu-transient-anderson
CUTH=${1:-./target/release/cuth}
for c in configs/mol_f2f_kt.toml $D/leak_0.28.toml; do
  b=$(basename $c .toml)
  for dt in 1e-2 1e-1; do
    for a in 0 3; do
      $CUTH transient $c --grid 128x128 --device cpu --dt $dt --steps 20 --init ambient \
        --nonlinear-iterations 20 --anderson $a --no-maps --out /tmp/b_tra_${b}_${dt}_$a --json \
        > $D/tr128_${b}_dt${dt}_a$a.json
    done
  done
done
# Near steady state (Δt = 10 s, 5 steps) on the near-runaway leakage case,
# where Picard's contraction factor approaches 1 within a step.
for a in 0 3; do
  $CUTH transient $D/leak_0.28.toml --grid 128x128 --device cpu --dt 10 --steps 5 --init ambient \
    --nonlinear-iterations 60 --anderson $a --no-maps --out /tmp/b_tra_long_$a --json \
    > $D/tr128_leak_0.28_dt10_a$a.json
done
