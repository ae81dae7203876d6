#!/usr/bin/env python3
"""Generate the synthetic power maps used by configs/mol_f2f.toml.

Usage: python3 scripts/gen_powermaps.py

Writes, relative to the repository root:

  powermaps/mol_logic.csv   logic die (FEOL of the bottom die), LOGIC_TOTAL_W
  powermaps/mol_memory.csv  memory die (FEOL of the top die),   MEMORY_TOTAL_W

Each file is a 200 x 200 CSV raster of watts per pixel over the whole 10 mm x
10 mm footprint (one pixel = 50 um x 50 um), no header, comma separated, one
raster row per line. As cuth reads rasters like an image, the FIRST row is the
TOP edge of the die (max y) and the first column is the left edge (min x).

Regenerate (Python 3 standard library only, deterministic: fixed seeds, no
numpy, byte-identical output on every run):

    python3 scripts/gen_powermaps.py

The maps are synthetic but laid out like real parts:

* Logic: 8 cores in a 4 x 2 arrangement (two rows of four, mirrored about a
  shared L3 band) with a private L2 each; inside each core a front end, a
  load/store + register-file block and an execution-unit cluster whose
  integer/FP ALUs are the hotspots (about 4-5x the die average on busy cores);
  two accelerator tiles (MAC arrays, elevated power) in a column on the right;
  an uncore/IO strip along the bottom edge (DDR/SerDes PHYs, memory
  controller) and a thin misc strip (PLLs, debug) along the top edge. Per-core
  activity factors are drawn from a seeded RNG (one core mostly idle).
* Memory: 8 x 4 banks split by a central horizontal spine (global I/O and
  control); between bank columns run row-decoder strips, along the top and
  bottom edge of each bank a sense-amplifier row, slightly hotter than the
  array; a few banks, drawn from a seeded RNG, are active (activate/read),
  the rest idle (refresh and leakage only).

Power densities are given in relative units and the map is scaled to the
chosen total; the rounding of the printed values is then corrected on the
largest pixel so that the file's sum is the total to ~1e-9 W.
"""

import os
import random
import sys

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)

# ----------------------------------------------------------------- settings
DIE_MM = 10.0            # square footprint, mm (matches configs/mol_f2f.toml)
NPIX = 200               # pixels per side -> 50 um pixels
LOGIC_TOTAL_W = 6.0      # logic die total, W
MEMORY_TOTAL_W = 1.2     # memory die total, W
FMT = "%.6e"
LOGIC_SEED = 20240611
MEMORY_SEED = 20240612
NOISE = 0.04             # +-4 % uniform pixel-level variation (layout texture)

PIX_MM = DIE_MM / NPIX


class Canvas:
    """A density map on the pixel grid, indexed [iy][ix] with iy = 0 at the
    BOTTOM (y = 0); flipped only when written. Rectangles are painted in
    order (later ones replace earlier ones) with fractional pixel coverage,
    so block edges need not fall on pixel edges."""

    def __init__(self, background):
        self.v = [[background] * NPIX for _ in range(NPIX)]

    def rect(self, x, y, w, h, density):
        """Paint [x, x+w] x [y, y+h] (mm, lower-left corner) with `density`."""
        x0, x1, y0, y1 = x, x + w, y, y + h
        ix0 = max(0, int(x0 / PIX_MM))
        ix1 = min(NPIX, int(-(-x1 // PIX_MM)))
        iy0 = max(0, int(y0 / PIX_MM))
        iy1 = min(NPIX, int(-(-y1 // PIX_MM)))
        for iy in range(iy0, iy1):
            oy = min(y1, (iy + 1) * PIX_MM) - max(y0, iy * PIX_MM)
            if oy <= 0:
                continue
            row = self.v[iy]
            for ix in range(ix0, ix1):
                ox = min(x1, (ix + 1) * PIX_MM) - max(x0, ix * PIX_MM)
                if ox <= 0:
                    continue
                f = min(1.0, (ox * oy) / (PIX_MM * PIX_MM))
                row[ix] = row[ix] * (1.0 - f) + density * f

    def add(self, x, y, w, h, extra):
        """Add `extra` density on top of what is there (same coverage rule)."""
        x0, x1, y0, y1 = x, x + w, y, y + h
        for iy in range(max(0, int(y0 / PIX_MM)), min(NPIX, int(-(-y1 // PIX_MM)))):
            oy = min(y1, (iy + 1) * PIX_MM) - max(y0, iy * PIX_MM)
            if oy <= 0:
                continue
            for ix in range(max(0, int(x0 / PIX_MM)), min(NPIX, int(-(-x1 // PIX_MM)))):
                ox = min(x1, (ix + 1) * PIX_MM) - max(x0, ix * PIX_MM)
                if ox > 0:
                    self.v[iy][ix] += extra * min(1.0, (ox * oy) / (PIX_MM * PIX_MM))

    def texture(self, rng, amplitude):
        for row in self.v:
            for ix in range(NPIX):
                row[ix] *= 1.0 + amplitude * (2.0 * rng.random() - 1.0)


# -------------------------------------------------------------- logic die
def logic_map():
    rng = random.Random(LOGIC_SEED)
    leak = 0.15                      # leakage / clock tree floor everywhere
    c = Canvas(leak)

    # Bottom uncore/IO strip, y 0-1.0 mm: PHYs at the edges, MC in between.
    c.rect(0.0, 0.0, 10.0, 1.0, 0.8)
    c.rect(0.2, 0.1, 2.2, 0.6, 1.4)          # DDR PHY 0
    c.rect(7.6, 0.1, 2.2, 0.6, 1.4)          # DDR PHY 1
    c.rect(3.0, 0.15, 4.0, 0.5, 1.0)         # memory controller / NoC root
    # Top misc strip, y 9.6-10 mm: PLLs, fuses, debug.
    c.rect(0.0, 9.6, 10.0, 0.4, 0.45)
    c.rect(1.0, 9.7, 0.4, 0.25, 1.2)         # PLL 0
    c.rect(6.0, 9.7, 0.4, 0.25, 1.2)         # PLL 1

    # Shared L3 band between the two core rows (x 0-8, y 4.4-6.2) plus a
    # ring-bus / mesh stop column at x 8.0-8.2.
    c.rect(0.0, 4.4, 8.0, 1.8, 0.32)
    for i in range(4):                       # slice controllers, a bit warmer
        c.rect(i * 2.0 + 0.85, 5.15, 0.3, 0.3, 0.9)
    c.rect(8.0, 1.0, 0.2, 8.6, 0.7)

    # 8 cores, 2.0 mm x 3.4 mm; bottom row y 1.0-4.4, top row y 6.2-9.6,
    # mirrored so that each core's L2 faces the L3 band.
    activity = [0.75 + 0.25 * rng.random() for _ in range(8)]
    activity[rng.randrange(8)] = 0.3         # one core mostly idle (C-state)
    cores = []
    for row in range(2):
        for col in range(4):
            cores.append((col * 2.0, 1.0 if row == 0 else 6.2, row == 1))
    for (x, y, mirrored), a in zip(cores, activity):
        c.rect(x + 0.1, y, 1.8, 3.4, leak + a * 1.1)      # core background logic
        if not mirrored:
            l2 = (0.1, 2.5, 1.8, 0.9)
            fe = (0.15, 0.1, 1.7, 0.8)       # fetch/decode/branch predictor
            ls = (0.15, 1.0, 0.7, 1.4)       # load/store + L1D
            ex = (0.95, 1.0, 0.9, 1.4)       # execution cluster
        else:
            l2 = (0.1, 0.0, 1.8, 0.9)
            fe = (0.15, 2.5, 1.7, 0.8)
            ls = (0.15, 1.0, 0.7, 1.4)
            ex = (0.95, 1.0, 0.9, 1.4)
        c.rect(x + l2[0], y + l2[1], l2[2], l2[3], leak + 0.25 + 0.2 * a)   # L2
        c.rect(x + fe[0], y + fe[1], fe[2], fe[3], leak + a * 1.7)
        c.rect(x + ls[0], y + ls[1], ls[2], ls[3], leak + a * 2.3)
        c.rect(x + ex[0], y + ex[1], ex[2], ex[3], leak + a * 2.8)
        # ALU / FMA hotspots inside the execution cluster.
        c.rect(x + ex[0] + 0.1, y + ex[1] + 0.15, 0.35, 0.45, leak + a * 5.6)
        c.rect(x + ex[0] + 0.5, y + ex[1] + 0.75, 0.3, 0.5, leak + a * 5.0)
        # Register file next to the load/store unit.
        c.rect(x + ls[0] + 0.35, y + ls[1] + 0.5, 0.3, 0.4, leak + a * 3.6)

    # Accelerator column x 8.2-10: two tiles with MAC arrays.
    for (ay, act) in ((1.3, 1.0), (5.3, 0.85)):
        c.rect(8.3, ay, 1.6, 3.6, leak + act * 1.6)          # tile: buffers, control
        c.rect(8.45, ay + 0.4, 1.3, 1.9, leak + act * 3.0)   # MAC array
        c.add(8.9, ay + 0.9, 0.4, 0.6, act * 1.2)            # busiest sub-array
    c.rect(8.3, 4.95, 1.6, 0.3, 0.5)                         # DMA / bridge

    c.texture(rng, NOISE)
    return c


# ------------------------------------------------------------- memory die
def memory_map():
    rng = random.Random(MEMORY_SEED)
    c = Canvas(0.12)                         # leakage floor
    ncol, nrow = 8, 4
    margin = 0.1
    spine_y, spine_h = 4.6, 0.8              # central spine: global I/O, control
    dec_w = 0.16                             # row-decoder strip between columns
    sa_h = 0.08                              # sense-amp row at each bank edge
    bank_w = (DIE_MM - 2 * margin - (ncol - 1) * dec_w) / ncol
    half_h = spine_y - margin                # height of each half (2 bank rows)
    bank_h = (half_h - 0.12) / 2             # 0.12 mm column-periphery strip between rows

    active = set(rng.sample(range(ncol * nrow), 6))
    c.rect(0.0, spine_y, DIE_MM, spine_h, 1.1)
    c.rect(0.3, spine_y + 0.2, 1.2, 0.4, 1.8)            # command/address I/O
    c.rect(8.5, spine_y + 0.2, 1.2, 0.4, 1.8)            # data I/O
    c.rect(4.4, spine_y + 0.15, 1.2, 0.5, 1.5)           # control logic, charge pumps
    for r in range(nrow):
        base = margin if r < 2 else spine_y + spine_h
        by = base + (r % 2) * (bank_h + 0.12)
        # column-periphery (global column decoders) strip between the two rows
        if r % 2 == 0:
            c.rect(margin, by + bank_h, DIE_MM - 2 * margin, 0.12, 0.55)
        for col in range(ncol):
            bx = margin + col * (bank_w + dec_w)
            k = r * ncol + col
            arr, sa = (0.95, 2.2) if k in active else (0.3, 0.55)
            c.rect(bx, by, bank_w, bank_h, arr)
            c.rect(bx, by, bank_w, sa_h, sa)
            c.rect(bx, by + bank_h - sa_h, bank_w, sa_h, sa)
            c.rect(bx, by + bank_h / 2 - sa_h / 2, bank_w, sa_h, sa)   # mid-bank SA row
            if col < ncol - 1:
                c.rect(bx + bank_w, by, dec_w, bank_h, 0.7)            # row decoders / wordline drivers
    c.texture(rng, NOISE)
    return c, sorted(active)


# ------------------------------------------------------------------ output
def write_map(canvas, total_w, path):
    s = sum(sum(row) for row in canvas.v)
    scale = total_w / s
    # rows top (max y) first, as cuth reads rasters
    rows = [[v * scale for v in canvas.v[iy]] for iy in range(NPIX - 1, -1, -1)]
    # Round as written, then put the rounding residual on the largest pixel.
    text = [[FMT % v for v in row] for row in rows]
    vals = [[float(t) for t in row] for row in text]
    resid = total_w - sum(sum(r) for r in vals)
    r_max, c_max = max(((i, j) for i in range(NPIX) for j in range(NPIX)),
                       key=lambda ij: vals[ij[0]][ij[1]])
    text[r_max][c_max] = FMT % (vals[r_max][c_max] + resid)
    vals[r_max][c_max] = float(text[r_max][c_max])
    with open(path, "w", newline="\n") as f:
        for row in text:
            f.write(",".join(row))
            f.write("\n")
    flat = [v for row in vals for v in row]
    got = sum(flat)
    mean = got / len(flat)
    pix_cm2 = (PIX_MM * 0.1) ** 2
    print("%s: %dx%d px, total %.9f W (target %.6f), mean %.2f W/cm^2, "
          "peak %.2f W/cm^2 (%.2fx mean), min %.2f W/cm^2, %d bytes"
          % (path, NPIX, NPIX, got, total_w, mean / pix_cm2, max(flat) / pix_cm2,
             max(flat) / mean, min(flat) / pix_cm2, os.path.getsize(path)))
    return got


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(root, "powermaps")
    os.makedirs(out, exist_ok=True)
    write_map(logic_map(), LOGIC_TOTAL_W, os.path.join(out, "mol_logic.csv"))
    mem, active = memory_map()
    print("memory: active banks (row-major from the bottom-left):", active)
    write_map(mem, MEMORY_TOTAL_W, os.path.join(out, "mol_memory.csv"))


if __name__ == "__main__":
    main()
