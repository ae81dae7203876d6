#!/usr/bin/env bash
# Writes a sweep manifest of N cases for configs/mol_f2f.toml (a small
# design-space exploration): the logic FEOL keeps its raster scaled to
# 4..8 W, the memory FEOL gets a 1.5 x 1 mm hot block that walks over the die
# (0.3..1.5 W) beside a fixed 0.4 W block. Usage:
#   bench/sweep_cases.sh N OUT.toml
# Raster paths are absolute, so OUT.toml may live anywhere.
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0; }
set -euo pipefail
n=${1:?usage: sweep_cases.sh N OUT.toml}
out=${2:?usage: sweep_cases.sh N OUT.toml}
root=$(cd "$(dirname "$0")/.." && pwd)
awk -v n="$n" -v root="$root" 'BEGIN {
    for (i = 0; i < n; i++) {
        f = (n > 1) ? i / (n - 1) : 0
        printf "[[case]]\nname = \"case%05d\"\n", i
        printf "power.logic_feol = { type = \"raster\", file = \"%s/powermaps/mol_logic.csv\", total = %.6f }\n", root, 4 + 4 * f
        printf "power.memory_feol = { type = \"blocks\", blocks = [ "
        printf "{ name = \"hot\", x = \"%.4f mm\", y = \"%.4f mm\", width = \"1.5 mm\", height = \"1 mm\", power = %.6f }, ", (i * 7 % 85) / 10, (i * 3 % 90) / 10, 0.3 + 1.2 * f
        printf "{ name = \"warm\", x = \"6 mm\", y = \"6 mm\", width = \"3 mm\", height = \"2 mm\", power = 0.4 } ] }\n\n"
    }
}' > "$out"
