#!/usr/bin/env python3
"""Compares two output folders of bench/kt_transient_modes.sh (BEFORE AFTER),
mode by mode: PCG iterations in total and per step, outer iterations per step,
peak, max abs difference of the final fields (the --save-state files: f64
after a 22-byte header), relative differences of power and stored heat per
step, worst per-step energy imbalance. One line per mode on stdout.
    python3 bench/compare_kt_transient.py BEFORE AFTER > compare.txt"""
import json, sys, struct, csv

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)
A, B = sys.argv[1], sys.argv[2]
def field(p):
    d = open(p,'rb').read()
    n = (len(d) - 22)//8
    return struct.unpack('<%dd' % n, d[-8*n:])
for n in ["semi","it","its","sst","lsemi","lit"]:
    a = json.load(open(f"{A}/{n}.json")); b = json.load(open(f"{B}/{n}.json"))
    fa, fb = field(f"{A}/{n}.state"), field(f"{B}/{n}.state")
    d = max(abs(x-y) for x,y in zip(fa,fb))
    ra = list(csv.DictReader(open(f"{A}/{n}/timeseries.csv"))); rb = list(csv.DictReader(open(f"{B}/{n}/timeseries.csv")))
    ita = [int(r['iterations']) for r in ra]; itb = [int(r['iterations']) for r in rb]
    oa = [r['outer_iterations'] for r in ra]; ob = [r['outer_iterations'] for r in rb]
    pa = [float(r['power_w']) for r in ra]; pb = [float(r['power_w']) for r in rb]
    sa = [float(r['stored_j']) for r in ra]; sb = [float(r['stored_j']) for r in rb]
    dp = max(abs(x-y)/max(abs(x),1e-300) for x,y in zip(pa,pb))
    ds = max(abs(x-y)/max(abs(x),1e-300) for x,y in zip(sa,sb))
    print(f"{n:6s} PCG total {a['iterations_total']} -> {b['iterations_total']}  per-step same: {ita==itb}  outer same: {oa==ob} ({'/'.join(ob[1:])})  peak {a['peak_t_k']:.9f} -> {b['peak_t_k']:.9f}  max|dT| field {d:.2e} K  power rel {dp:.1e} stored rel {ds:.1e}  imbalance {a['energy']['max_step_relative_imbalance']:.1e} -> {b['energy']['max_step_relative_imbalance']:.1e}")
