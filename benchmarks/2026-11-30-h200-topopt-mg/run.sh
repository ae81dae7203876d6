#!/bin/bash
cd "$(dirname "$0")"
./cuth info > $OUT/info.txt 2>&1
timeout 60 ./gpu_topopt_mg --ignored --nocapture --test-threads=1 > $OUT/gpu_test.log 2>&1; echo "test rc $?" >> $OUT/gpu_test.log
for n in 200 192; do for p in jacobi mg; do
  /usr/bin/time -v timeout 55 ./cuth topopt cantilever --nelx $n --precond $p --device cuda --out /tmp/c${n}_$p --quiet > $OUT/c${n}_$p.log 2>&1
  echo "rc $?" >> $OUT/c${n}_$p.log
  mkdir -p $OUT/c${n}_$p; cp /tmp/c${n}_$p/*.json /tmp/c${n}_$p/*.csv $OUT/c${n}_$p/ 2>/dev/null
done; done
tail -3 $OUT/*.log
