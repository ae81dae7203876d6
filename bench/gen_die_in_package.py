#!/usr/bin/env python3
"""Prints the stack of tests/solver/package.rs (a 2 x 1.5 mm die, 3 W, in a 16 mm
package) on a non-uniform grid of smallest cell CELL and largest MAXCELL
("-": the default cap), for bench/mg_graded.sh:
    python3 bench/gen_die_in_package.py "25 um" "100 um" > stack.toml"""
import sys

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)
cell, maxc = sys.argv[1], sys.argv[2]
mc = f'max_cell = "{maxc}"\n' if maxc != "-" else ""
print(f'''[package]
width = "16 mm"
length = "16 mm"
[grid]
cell = "{cell}"
{mc}[boundary]
ambient = 300.0
h_top = 5000.0
[materials.si]
k = 130.0
heat_capacity = 1.6e6
[materials.tim]
k = 4.0
heat_capacity = 4e6
[materials.cu]
k = 400.0
heat_capacity = 3.5e6
[[layers]]
name = "die"
material = "si"
thickness = "100 um"
outline = {{ x = "5 mm", y = "6 mm", width = "2 mm", length = "1.5 mm" }}
fill = "none"
power = {{ type = "uniform", total = 3.0 }}
[[layers]]
name = "tim"
material = "tim"
thickness = "20 um"
outline = {{ x = "5 mm", y = "6 mm", width = "2 mm", length = "1.5 mm" }}
[[layers]]
name = "spreader"
material = "cu"
thickness = "1 mm"
cells = 2
''')
