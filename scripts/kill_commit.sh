#!/usr/bin/env bash
# SIGKILL check of the output commit: runs `cuth solve`, `cuth transient`
# and `cuth topopt` into one --out, alternating two grids (so a mix of two
# runs is visible in the maps and the density field), and kills each with
# SIGKILL at a random moment, the commit included. After every kill the
# folder must hold one complete run (every file its manifest lists, each map
# with one grid, a topopt's density and history with summary.json's mesh
# and iterations) or be
# mid-commit (.cuth-commit.json present), which the next run must finish
# first; a user file placed in the folder must survive everything.
#
#   scripts/kill_commit.sh [N] [LAYERS]   (build first: cargo build --release)
#
# The kill moments come from a seeded generator (KILL_SEED, default 1), so a
# failure can be replayed; CI runs a short version (`.ci/run`). Every moment
# must pass, so the check does not depend on where the kills land.
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -u
N=${1:-40}
LAYERS=${2:-200}
SEED=${KILL_SEED:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CUTH=${CUTH:-$ROOT/target/release/cuth}
WORK=$(mktemp -d)
OUT=$WORK/out
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT/final"
echo mine >"$OUT/blocks.csv"
echo mine >"$OUT/final/thesis.tex"

# A stack of LAYERS thin layers: 2*LAYERS map files make the commit long.
python3 - "$WORK/stack.toml" "$LAYERS" <<'PY'
import sys
p, n = sys.argv[1], int(sys.argv[2])
s = ['[chip]\nwidth = "2 mm"\nlength = "2 mm"\n[grid]\nnx = 8\nny = 8\n',
     '[boundary]\nambient = 300\nh_top = 1e4\n',
     '[materials.si]\nk = 130\nheat_capacity = 1.6e6\n']
for i in range(n):
    s.append(f'[[layers]]\nname = "l{i}"\nmaterial = "si"\nthickness = 1e-6\n')
s.append("power = { type = \"uniform\", total = 1.0 }\n")
open(p, "w").write("".join(s))
PY

check() { # prints "ok ..." or "BAD ..."
python3 - "$OUT" <<'PY'
import json, os, sys
d = sys.argv[1]
for f in ("blocks.csv", "final/thesis.tex"):
    if open(os.path.join(d, f)).read() != "mine\n":
        print(f"BAD user file {f} changed"); sys.exit()
if os.path.exists(os.path.join(d, ".cuth-commit.json")):
    print("ok mid-commit"); sys.exit()
mf = os.path.join(d, ".cuth-run.json")
if not os.path.exists(mf):
    print("ok no run yet"); sys.exit()
m = json.load(open(mf))
missing = [f for f in m["files"] if not os.path.exists(os.path.join(d, f))]
if missing:
    print(f"BAD {len(missing)} listed files missing, e.g. {missing[0]}"); sys.exit()
if m["command"] == "topopt":
    s = json.load(open(os.path.join(d, "summary.json")))
    mesh = s["problem"]["mesh"]
    vti = open(os.path.join(d, "density.vti"), "rb").read()
    want = 'WholeExtent="0 {} 0 {} 0 {}"'.format(*mesh).encode()
    if want not in vti:
        print(f"BAD density.vti is not summary.json's mesh {mesh}"); sys.exit()
    rows = sum(1 for _ in open(os.path.join(d, "history.csv"))) - 1
    if rows != s["iterations"]:
        print(f"BAD history.csv has {rows} rows, summary.json {s['iterations']} iterations")
        sys.exit()
ny = None
for f in m["files"]:
    if f.endswith(".csv") and "/" not in f and f[:2].isdigit():
        rows = sum(1 for l in open(os.path.join(d, f)) if not l.startswith("#"))
        if ny is None: ny = rows
        elif rows != ny:
            print(f"BAD maps of two grids ({ny} and {rows} rows)"); sys.exit()
print(f"ok {m['command']} ({len(m['files'])} files)")
PY
}

# One run of each kind to the end first: its wall time bounds the kill
# moments of that kind.
bound() { # command...: prints 1.2 x the run's wall time
  local t0; t0=$(date +%s.%N)
  "$@" --device cpu -q --out "$OUT" >/dev/null || exit 1
  python3 -c "print(($(date +%s.%N) - $t0) * 1.2)"
}
# A small design, few iterations: about as long as one solve.
TOPOPT=(topopt cantilever --iterations 5)
T_TOPOPT=$(bound "$CUTH" "${TOPOPT[@]}" --nelx 16) || exit 1
T=$(bound "$CUTH" solve "$WORK/stack.toml" --grid 12x12) || exit 1
echo "one run: solve ${T} s, topopt ${T_TOPOPT} s, x 1.2 (kills uniform in 0..that)"

bad=0; mid=0
for i in $(seq 1 "$N"); do
  g=$(( i % 2 ? 8 : 12 ))
  t=$T
  case $((i % 3)) in
    0) args=(transient "$WORK/stack.toml" --dt 1e-3 --steps 2 --grid "${g}x${g}") ;;
    1) args=(solve "$WORK/stack.toml" --grid "${g}x${g}") ;;
    2) args=("${TOPOPT[@]}" --nelx "$g") t=$T_TOPOPT ;;
  esac
  "$CUTH" "${args[@]}" --device cpu -q --out "$OUT" >/dev/null 2>&1 &
  pid=$!
  sleep "$(python3 -c "import random; random.seed($SEED * 100003 + $i); print(random.uniform(0, $t))")"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  r=$(check)
  case $r in BAD*) bad=$((bad + 1)); echo "kill $i: $r" ;; *mid-commit*) mid=$((mid + 1)) ;; esac
done
# One run to the end: it must finish any half-done commit and leave itself.
"$CUTH" solve "$WORK/stack.toml" --grid 8x8 --device cpu -q --out "$OUT" || bad=$((bad + 1))
final=$(check)
left=$(find "$OUT" -maxdepth 1 -name '.cuth-*' ! -name .cuth-run.json | wc -l)
echo "kills: $N (inconsistent: $bad, left mid-commit: $mid)"
echo "final folder: $final; cuth files left besides the manifest: $left"
[ $bad -eq 0 ] && [ "$left" -eq 0 ] && [[ $final == ok* ]]
