#!/usr/bin/env python3
"""A surrogate-model dataset with the cuth Python package: random power
maps on the logic die of configs/mol_f2f.toml (a face-to-face logic +
memory stack) in, the logic layer's steady temperature maps out, solved as
`cuth sweep` solves many cases (one assembly, one multigrid hierarchy,
batched on a GPU), written to one .npz:

    power        (cases, ny, nx)  W per cell, float32
    temperature  (cases, ny, nx)  K, float32
    x_m, y_m     (nx,), (ny,)     cell centres, m (the grid is uniform)

    pip install ./python
    python3 examples/dataset.py [--cases 10000] [--grid 128] [--out dataset.npz]
                                [--chunk 1000] [--seed 0] [--device auto]

Cases are solved `--chunk` at a time and written into the archive's arrays
as they come (memory-mapped), so 10 000 cases at 128² (1.3 GB of float32)
never sit in memory at once. Each map is 1 to 6 Gaussian hot spots over a
uniform floor, scaled to a total of 2 to 10 W.
"""

import argparse
import os
import shutil
import tempfile
import time
import zipfile

import numpy as np

import cuth

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STACK = os.path.join(ROOT, "configs", "mol_f2f.toml")
LAYER = "logic_feol"


def random_maps(rng, n, nx, ny, spots=6):
    """`n` maps (ny, nx) of W per cell: a floor and 1..6 Gaussian spots
    (separable, so a chunk's maps are one product of small arrays)."""
    x = (np.arange(nx) + 0.5) / nx
    y = (np.arange(ny) + 0.5) / ny
    count = rng.integers(1, spots + 1, n)
    cx, cy = rng.uniform(0.1, 0.9, (2, n, spots))
    s = rng.uniform(0.03, 0.15, (n, spots))
    amp = rng.uniform(0.5, 3.0, (n, spots)) * (np.arange(spots) < count[:, None])
    gx = np.exp(-((x - cx[..., None]) ** 2) / (2 * s[..., None] ** 2))
    gy = np.exp(-((y - cy[..., None]) ** 2) / (2 * s[..., None] ** 2))
    m = rng.uniform(0.05, 0.3, n)[:, None, None] + np.einsum("nk,nky,nkx->nyx", amp, gy, gx)
    return m * (rng.uniform(2.0, 10.0, n) / m.sum(axis=(1, 2)))[:, None, None]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--grid", type=int, default=128)
    ap.add_argument("--out", default="dataset.npz")
    ap.add_argument("--chunk", type=int, default=1000, help="cases per sweep call")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="auto")
    args = ap.parse_args()

    n = args.grid
    stack = cuth.Stack.from_toml(STACK, grid=(n, n), device=args.device)
    rng = np.random.default_rng(args.seed)
    tmp = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(args.out)))
    try:
        arrays = {
            name: np.lib.format.open_memmap(os.path.join(tmp, f"{name}.npy"), mode="w+",
                                            dtype=np.float32, shape=(args.cases, n, n))
            for name in ("power", "temperature")
        }
        t0 = time.perf_counter()
        solving = 0.0
        for start in range(0, args.cases, args.chunk):
            k = min(args.chunk, args.cases - start)
            p = random_maps(rng, k, n, n)
            arrays["power"][start:start + k] = p
            t1 = time.perf_counter()
            t = cuth.sweep(stack, p, layer=LAYER)
            solving += time.perf_counter() - t1
            arrays["temperature"][start:start + k] = t
        wall = time.perf_counter() - t0
        for a in arrays.values():
            a.flush()
        del arrays
        g = stack.solve().summary["grid"]
        np.save(os.path.join(tmp, "x_m.npy"), (np.arange(n) + 0.5) * g["dx_m"])
        np.save(os.path.join(tmp, "y_m.npy"), (np.arange(n) + 0.5) * g["dy_m"])
        # An .npz is a zip of .npy files; stored, not compressed, as np.savez writes it.
        with zipfile.ZipFile(args.out, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
            for name in ("power", "temperature", "x_m", "y_m"):
                z.write(os.path.join(tmp, f"{name}.npy"), f"{name}.npy")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{args.cases} cases at {n}x{n} on {stack.device}: {wall:.2f} s, "
          f"{args.cases / wall:.2f} cases/s ({solving:.2f} s in cuth.sweep, "
          f"{args.cases / solving:.2f} cases/s) -> {args.out}")


if __name__ == "__main__":
    main()
