#!/usr/bin/env bash
# CPU benchmark for BENCHMARKS.md: mol_f2f at several in-plane grids with each
# preconditioner, through the CLI. Prints a markdown table: solve time (PCG
# only), iterations, time per iteration, and the command of each row.
# Usage: bench/cpu.sh [SIZES...]   (default: 128 256 512)
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
sizes=${*:-128 256 512}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "| grid | cells | precond | iterations | setup s | solve s | ms/iter | command |"
echo "|---|---|---|---|---|---|---|---|"
for n in $sizes; do
    for p in none jacobi chebyshev; do
        cmd="target/release/cuth solve configs/mol_f2f.toml --grid ${n}x${n} --device cpu --precond $p --json --out $out/r"
        $cmd > "$out/s.json"
        python3 - "$out/s.json" "$cmd" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); t = dict(s["timings_s"]); sol = s["solver"]; g = s["grid"]
it = sol["iterations"]
print(f"| {g['nx']}x{g['ny']}x{g['nz']} | {g['cells']} | {sol['precond']['name']} | {it} | "
      f"{t['precond_setup']:.3f} | {t['solve']:.3f} | {1e3 * t['solve'] / max(it, 1):.3f} | `{sys.argv[2].split(' --json')[0]}` |")
PY
    done
done
