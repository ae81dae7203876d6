#!/bin/bash
# usage (repo root): run.sh BIN OUTDIR -- the shipped k(T) transient example on the CPU
# (mol_f2f_kt 64x64x18, Δt 1e-2), six modes; "lsemi"/"lit": mol_f2f_kt with the
# per-cell leakage on the logic raster (p_ref 0.8 W at 358.15 K, β 0.017/K).
# compare.py BEFORE AFTER reads the outputs (and the --save-state fields).
B=$1; O=$2; C=configs/mol_f2f_kt.toml; L=configs/_trunify_leak_kt.toml
sed 's|file = "../powermaps/mol_logic.csv" }|file = "../powermaps/mol_logic.csv" }\nleakage = { p_ref = 0.8, t_ref = 358.15, beta = 0.017 }|' $C > $L
mkdir -p $O
r() { n=$1; shift; $B transient "$@" --device cpu --dt 1e-2 --no-maps --json --out $O/$n --save-state $O/$n.state > $O/$n.json; echo "$n rc=$?"; }
r semi $C --steps 20
r it $C --steps 10 --nonlinear-iterations 20
r its $C --steps 5 --nonlinear-iterations 20 --init steady
r sst $C --steps 5 --init steady
r lsemi $L --steps 10
r lit $L --steps 10 --nonlinear-iterations 20
rm -f $L
