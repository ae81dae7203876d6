#!/bin/bash
# Semi-implicit against iterated steps (--nonlinear-iterations), CPU, heating
# up from ambient for 0.2 s:
#   bash benchmarks/2026-11-30-cpu-anderson/transient.sh [CUTH]
set -e
D=benchmarks/2026-11-30-cpu-anderson
CUTH=${1:-./target/release/cuth}
sed "s/P_REF/0.28/" $D/mol_f2f_kt_leak.template > $D/leak_0.28.toml
for c in configs/mol_f2f_kt.toml $D/leak_0.28.toml; do
  b=$(basename $c .toml)
  for n in 0 20; do
    $CUTH transient $c --grid 128x128 --device cpu --dt 1e-2 --steps 20 --init ambient \
      --nonlinear-iterations $n --no-maps --out /tmp/b_tr_${b}_$n --json > $D/tr128_${b}_n$n.json
    cp /tmp/b_tr_${b}_$n/timeseries.csv $D/tr128_${b}_n$n.timeseries.csv
  done
  # Reference: iterated with a 10x finer step.
  $CUTH transient $c --grid 128x128 --device cpu --dt 1e-3 --steps 200 --init ambient \
    --nonlinear-iterations 20 --no-maps --out /tmp/b_tr_${b}_fine --json > $D/tr128_${b}_fine.json
done
