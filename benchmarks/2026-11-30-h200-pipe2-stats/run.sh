#!/usr/bin/env bash
# pipe2, device call 2: GPU tests touched, 2048² A/B (new vs main), auto, maps, npy, hbm/ev6, 4096², 8192².
cd "$(dirname "$0")"; B=$PWD; R=$(cd ../.. && pwd)
mkdir -p /work && ln -sfn "$R" /work/wt-pipe2; [ -e /work/main ] || ln -sfn "$R" /work/main
cd "$R"; W=/tmp/p2; rm -rf $W; mkdir -p $W $OUT/logs
step() { n=$1; shift; s=$(date +%s%N); "$@" > $OUT/logs/$n.log 2>&1; rc=$?; echo "== $n rc=$rc $(( ($(date +%s%N)-s)/1000000 )) ms :: $(grep -h 'test result' $OUT/logs/$n.log | tail -1)" | tee -a $OUT/steps.txt; }
step info $B/cuth info
step t_gpu_pipeline $B/gpu_pipeline --ignored --nocapture --test-threads=1
step t_gpu_assemble $B/gpu_assemble --ignored --nocapture --test-threads=1
step t_gpu_steady256 $B/gpu --ignored --nocapture --test-threads=1 steady_mol_f2f_256_matches_cpu
step t_gpu_mg_setup $B/gpu_mg_setup --ignored --nocapture --test-threads=1
step t_gpu_transient_device $B/gpu_transient_device --ignored --nocapture --test-threads=1
step t_gpu_nonlinear $B/gpu_nonlinear --ignored --nocapture --test-threads=1
step t_gpu_mixed $B/gpu_mixed --ignored --nocapture --test-threads=1
step t_gpu_sweep $B/gpu_sweep --ignored --nocapture --test-threads=1
M="configs/mol_f2f.toml --grid 2048x2048 --json"
step warm_new $B/cuth solve $M --device cuda --no-maps --out $W/w1
step warm_main $B/cuth_main solve $M --device cuda --no-maps --out $W/w2
for i in 1 2 3 4; do
  step m2048_new_$i $B/cuth solve $M --device cuda --no-maps --out $W/n$i
  step m2048_main_$i $B/cuth_main solve $M --device cuda --no-maps --out $W/m$i
done
step m2048_auto $B/cuth solve $M --device auto --no-maps --out $W/auto
step m2048_npy $B/cuth solve $M --device cuda --no-maps --npy f32 --out $W/npy
step m2048_maps_new $B/cuth solve $M --device cuda --out $W/mapsN
step m2048_maps_main $B/cuth_main solve $M --device cuda --out $W/mapsM
for f in $(cd $W/mapsN && ls); do [ "$f" = summary.json ] && continue; cmp -s $W/mapsN/$f $W/mapsM/$f && echo "same $f" || echo "DIFF $f"; done > $OUT/maps_cmp.txt
step hbm_new $B/cuth solve configs/hbm_2p5d.toml --device cuda --json --out $W/hbmN
step hbm_main $B/cuth_main solve configs/hbm_2p5d.toml --device cuda --json --out $W/hbmM
step hbm_cpu $B/cuth solve configs/hbm_2p5d.toml --device cpu --json --out $W/hbmC
for f in $(cd $W/hbmN && ls); do [ "$f" = summary.json ] && continue; cmp -s $W/hbmN/$f $W/hbmM/$f && echo "same $f" || echo "DIFF $f"; done > $OUT/hbm_cmp.txt
step ev6_new $B/cuth solve configs/hotspot_ev6_3d.toml --device cuda --json --out $W/ev6
step ev6_cpu $B/cuth solve configs/hotspot_ev6_3d.toml --device cpu --json --out $W/ev6c
step m4096_new $B/cuth solve configs/mol_f2f.toml --grid 4096x4096 --json --device cuda --no-maps --out $W/m4096
rm -rf $W/mapsN $W/mapsM $W/npy
step m8192_new /usr/bin/time -v $B/cuth solve configs/mol_f2f.toml --device cuda --grid 8192x8192 --json --no-maps --out $W/m8192n
step m8192_main /usr/bin/time -v $B/cuth_main solve configs/mol_f2f.toml --device cuda --grid 8192x8192 --json --no-maps --out $W/m8192m
python3 - $OUT/logs <<'PY' > $OUT/table.txt 2>&1
import json, sys
L = sys.argv[1]
def j(n):
    try:
        t = open(f"{L}/{n}.log").read(); return json.JSONDecoder().raw_decode(t[t.index("{"):])[0]
    except Exception as e: return None
runs = ["m2048_new_1","m2048_main_1","m2048_new_2","m2048_main_2","m2048_new_3","m2048_main_3","m2048_new_4","m2048_main_4","m2048_auto","m2048_npy","m2048_maps_new","m2048_maps_main","hbm_new","hbm_main","hbm_cpu","ev6_new","ev6_cpu","m4096_new","m8192_new","m8192_main"]
for n in runs:
    s = j(n)
    if not s: print(n, "no json"); continue
    t = dict(s["timings_s"]); sol = t.get("solve", 0)
    print(f"{n:16s} nonPCG {sum(t.values())-sol:.3f} solve {sol:.3f} wall {s.get('wall_s', 0):.3f} it {s['solver']['iterations']} Tmax {s['hottest']['t_k']:.9f} E {s['energy']['relative_error']:.2e} rss {s.get('host_peak_rss_bytes')} " + " ".join(f"{k}={v:.3f}" for k,v in t.items() if k!='solve'))
    print(f"{n:16s} detail " + " ".join(f"{k}={v:.3f}" for k,v in s.get("timings_detail_s", [])))
def cmp(a, b, what):
    sa, sb = j(a), j(b)
    if not (sa and sb): print(what, "missing"); return
    d = max(abs(la[k]-lb[k]) for la, lb in zip(sa["layers"], sb["layers"]) for k in ("t_min_k","t_avg_k","t_max_k"))
    r = max(abs(la[k]-lb[k])/abs(lb[k]) for la, lb in zip(sa["layers"], sb["layers"]) for k in ("t_min_k","t_avg_k","t_max_k"))
    hs = all(la["hottest"] == lb["hottest"] for la, lb in zip(sa["layers"], sb["layers"]))
    ea, eb = sa["energy"], sb["energy"]
    pr = [abs(p["t_k"]-q["t_k"]) for p, q in zip(sa.get("probes", []), sb.get("probes", []))]
    print(f"{what}: layer stats max |d| {d:.2e} K (rel {r:.1e}), hottest cells same {hs}, Tmax {sa['hottest']['t_k']:.12f} vs {sb['hottest']['t_k']:.12f}, energy out {ea['heat_out_top_w']+ea['heat_out_bottom_w']:.15g} vs {eb['heat_out_top_w']+eb['heat_out_bottom_w']:.15g}, probes max |d| {max(pr) if pr else 0:.2e}")
cmp("m2048_new_1", "m2048_npy", "2048 device stats vs host fold (same binary)")
cmp("m2048_new_1", "m2048_main_1", "2048 new vs main")
cmp("m2048_maps_new", "m2048_maps_main", "2048 maps new vs main")
cmp("hbm_new", "hbm_main", "hbm new vs main (cuda)")
cmp("hbm_new", "hbm_cpu", "hbm cuda vs cpu")
cmp("ev6_new", "ev6_cpu", "ev6 cuda vs cpu")
cmp("m8192_new", "m8192_main", "8192 new vs main")
import statistics as st
for tag in ("new", "main"):
    v = []
    for i in (1,2,3,4):
        s = j(f"m2048_{tag}_{i}")
        if s: t = dict(s["timings_s"]); v.append(sum(t.values()) - t.get("solve", 0))
    if v: print(f"m2048 {tag}: non-PCG runs {[round(x,3) for x in v]} median {st.median(v):.3f} min {min(v):.3f}")
PY
cat $OUT/table.txt; cat $OUT/maps_cmp.txt | sort | uniq -c | head -3; grep -c same $OUT/maps_cmp.txt; grep DIFF $OUT/maps_cmp.txt $OUT/hbm_cmp.txt | head; cat $OUT/hbm_cmp.txt | head -20
grep -h "Maximum resident\|Elapsed (wall" $OUT/logs/m8192_new.log $OUT/logs/m8192_main.log
grep -h "FAILED\|panicked" $OUT/logs/t_*.log | head -20
cd $OUT && tar czf logs.tgz logs && rm -rf logs
