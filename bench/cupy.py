#!/usr/bin/env python3
"""Peer baseline for `cuth bench`: CuPy's CG (cuSPARSE CSR SpMV) with a Jacobi
preconditioner on the very systems cuth solves.

Reads systems written by `cuth bench --export DIR` (DIR/<N>x<N>/{d,gx,gy,gz,
rhs}.bin, raw little-endian f64, and meta.json), builds the same matrix in CSR
on the GPU (explicit zeros dropped, columns sorted), checks it against the
Quad-Diag formula, times CuPy's CSR SpMV (median of --reps, CUDA events) and
`cupyx.scipy.sparse.linalg.cg` to a relative residual of --rtol from x0 = 0
(warm-up first; iterations counted by callback), and checks the true relative
residual ||b - A x|| / ||b|| afterwards. One line per system, plus JSON lines
with --json.

CuPy's cg stops when ||r_k|| <= max(atol, rtol * ||b||) with r_k its
recurrence residual; with atol = 0 and x0 = 0 that is cuth's criterion
||b - A x|| / ||b|| <= rtol. Older CuPy names the argument `tol` instead of
`rtol`; both are handled.

    python3 bench/cupy.py /tmp/cuth_export            # every system in it
    python3 bench/cupy.py /tmp/cuth_export/1024x1024 --rtol 1e-8
    python3 bench/cupy.py DIR --numpy                 # CPU check of the script

Runs on the GPU machine (CuPy, NumPy); --numpy uses NumPy/SciPy instead, to
test the script without a GPU.
"""

import argparse
import inspect
import json
import math
import sys
import time
from pathlib import Path


class Budget(Exception):
    """Raised from the CG callback when the time budget is spent."""


def load_backend(use_numpy):
    """(array module, sparse module, cg, LinearOperator, synchronize, GPU
    timer or None)."""
    if use_numpy:
        import numpy as xp
        import scipy.sparse as sp
        from scipy.sparse.linalg import LinearOperator, cg

        return xp, sp, cg, LinearOperator, (lambda: None), None
    import cupy as xp
    import cupyx.scipy.sparse as sp
    from cupyx.scipy.sparse.linalg import LinearOperator, cg

    def sync():
        xp.cuda.Device().synchronize()

    def gpu_us(f):
        """GPU time of what f() enqueues, µs, from two CUDA events."""
        start, stop = xp.cuda.Event(), xp.cuda.Event()
        start.record()
        f()
        stop.record()
        stop.synchronize()
        return xp.cuda.get_elapsed_time(start, stop) * 1e3

    return xp, sp, cg, LinearOperator, sync, gpu_us


def find_systems(paths):
    out = []
    for p in map(Path, paths):
        if (p / "meta.json").is_file():
            out.append(p)
        else:
            out.extend(sorted(m.parent for m in p.glob("*/meta.json")))
    # Smallest first.
    return sorted(set(out), key=lambda d: json.loads((d / "meta.json").read_text())["n"])


def load_system(d, xp):
    import numpy as np

    meta = json.loads((d / "meta.json").read_text())
    n = meta["n"]
    arrays = {}
    for name in ("d", "gx", "gy", "gz", "amb", "rhs"):
        a = np.fromfile(d / f"{name}.bin", dtype="<f8")
        if a.size != n:
            sys.exit(f"{d / (name + '.bin')}: {a.size} values, meta.json says n = {n}")
        arrays[name] = xp.asarray(a)
    return meta, arrays


def qd_residual(q, x, b, sy, sz):
    """b - A x in cuth's difference form, (A x)_i = amb_i x_i + sum g (x_i - x_j),
    which does not cancel in nearly uniform regions (see src/linalg/quad_diag.rs):
    the residual cuth reports, so both solvers are judged alike."""
    y = q["amb"] * x
    for g, s in ((q["gx"], 1), (q["gy"], sy), (q["gz"], sz)):
        if s < x.size:
            dx = x[:-s] - x[s:]
            y[:-s] += g[:-s] * dx
            y[s:] -= g[:-s] * dx
    return b - y


def qd_apply(q, x, sy, sz):
    """y = A x straight from the Quad-Diag arrays (the reference formula)."""
    d, gx, gy, gz = q["d"], q["gx"], q["gy"], q["gz"]
    y = d * x
    for g, s in ((gx, 1), (gy, sy), (gz, sz)):
        if s < x.size:
            y[:-s] -= g[:-s] * x[s:]
            y[s:] -= g[:-s] * x[:-s]
    return y


def build_csr(q, n, sy, sz, xp, sp):
    """CSR of the symmetric 7-point matrix: per row, columns i-sz, i-sy, i-1,
    i, i+1, i+sy, i+sz in that (ascending) order, zeros dropped, diagonal
    kept."""
    offsets = (-sz, -sy, -1, 0, 1, sy, sz)
    vals = xp.zeros((n, 7), dtype=xp.float64)
    for k, o in enumerate(offsets):
        if o == 0:
            vals[:, k] = q["d"]
            continue
        g = {1: q["gx"], sy: q["gy"], sz: q["gz"]}[abs(o)]
        if abs(o) >= n:
            continue
        if o > 0:
            vals[: n - o, k] = -g[: n - o]  # A[i, i+o] = -g[i]
        else:
            vals[-o:, k] = -g[: n + o]  # A[i, i-|o|] = -g[i-|o|]
    mask = vals != 0
    mask[:, 3] = True
    cols = xp.arange(n, dtype=xp.int64)[:, None] + xp.asarray(offsets, dtype=xp.int64)[None, :]
    indptr = xp.zeros(n + 1, dtype=xp.int64)
    indptr[1:] = xp.cumsum(mask.sum(axis=1))
    if int(indptr[-1]) >= 2**31:
        sys.exit(f"{int(indptr[-1])} nonzeros: too many for 32-bit CSR indices")
    data = vals[mask]
    # cuSPARSE (through cupyx) takes 32-bit indices.
    indices = cols[mask].astype(xp.int32)
    del vals, cols, mask
    return sp.csr_matrix((data, indices, indptr.astype(xp.int32)), shape=(n, n))


def median(v):
    v = sorted(v)
    m = len(v) // 2
    return v[m] if len(v) % 2 else 0.5 * (v[m - 1] + v[m])


def time_spmv(a, x, reps, sync, gpu_us):
    """Median µs of y = A x (after 5 warm-up products)."""
    for _ in range(5):
        a @ x
    sync()
    ts = []
    for _ in range(reps):
        if gpu_us is not None:
            ts.append(gpu_us(lambda: a @ x))
        else:
            t = time.perf_counter()
            a @ x
            ts.append((time.perf_counter() - t) * 1e6)
    return median(ts)


def cg_kwargs(cg, rtol):
    params = inspect.signature(cg).parameters
    kw = {"rtol": rtol} if "rtol" in params else {"tol": rtol}
    if "atol" in params:
        kw["atol"] = 0.0
    return kw


def run_cg(a, b, m, cg, rtol, max_iter, budget_s, sync):
    """Returns (x or None, iterations, seconds, info, capped)."""
    state = {"it": 0}
    t0 = [0.0]

    def callback(_xk):
        state["it"] += 1
        if time.perf_counter() - t0[0] > budget_s:
            raise Budget()

    sync()
    t0[0] = time.perf_counter()
    try:
        x, info = cg(a, b, M=m, maxiter=max_iter, callback=callback, **cg_kwargs(cg, rtol))
        capped = False
    except Budget:
        x, info, capped = None, -1, True
    sync()
    return x, state["it"], time.perf_counter() - t0[0], info, capped


def bench_one(d, args, xp, sp, cg, linop, sync, gpu_us):
    meta, q = load_system(d, xp)
    nx, ny, nz, n = meta["nx"], meta["ny"], meta["nz"], meta["n"]
    sy, sz = nx, nx * ny
    label = f"{nx}x{ny}x{nz}"
    t = time.perf_counter()
    a = build_csr(q, n, sy, sz, xp, sp)
    sync()
    build_s = time.perf_counter() - t
    b = q["rhs"]
    # The CSR matrix is the Quad-Diag matrix.
    xt = xp.linspace(0.5, 1.5, n)
    ref = qd_apply(q, xt, sy, sz)
    # Relative to the size of the terms (|d x| bounds every row's sum of
    # |terms| / 2): rows with near-zero sums cancel, so |ref| is no scale.
    csr_err = float(xp.abs(a @ xt - ref).max() / (xp.abs(q["d"]) * xp.abs(xt)).max())
    if csr_err > 1e-13:
        sys.exit(f"{label}: CSR differs from the Quad-Diag formula by {csr_err:.2e}")
    spmv_us = time_spmv(a, xt, args.reps, sync, gpu_us)
    csr_bytes = 12 * a.nnz + 4 * (n + 1) + 16 * n
    dinv = 1.0 / q["d"]
    m = linop((n, n), matvec=lambda r: r * dinv, dtype=xp.float64)
    # Warm-up: compiles CuPy's kernels and sets up cuSPARSE.
    run_cg(a, b, m, cg, args.rtol, 5, 1e9, sync)
    x, iters, secs, info, capped = run_cg(a, b, m, cg, args.rtol, args.max_iter, args.budget_s, sync)
    if x is not None:
        rel_csr = float(xp.linalg.norm(b - a @ x) / xp.linalg.norm(b))
        rel = float(xp.linalg.norm(qd_residual(q, x, b, sy, sz)) / xp.linalg.norm(b))
    else:
        rel = rel_csr = math.nan
    rec = {
        "system": label,
        "n": n,
        "nnz": int(a.nnz),
        "csr_build_s": build_s,
        "csr_check_rel_err": csr_err,
        "spmv_us": spmv_us,
        "spmv_gb_per_s_csr_bytes": csr_bytes / (spmv_us * 1e-6) / 1e9,
        "spmv_gb_per_s_at_48B_per_row": 48 * n / (spmv_us * 1e-6) / 1e9,
        "cg_iterations": iters,
        "cg_s": secs,
        "cg_us_per_iter": secs * 1e6 / max(iters, 1),
        "cg_info": int(info),
        "capped": capped,
        "true_rel_residual": rel,
        "true_rel_residual_csr_spmv": rel_csr,
        "rtol": args.rtol,
        "backend": "numpy" if args.numpy else "cupy",
    }
    status = f"capped after {args.budget_s:.0f} s" if capped else ("converged" if info == 0 else f"info {info}")
    print(
        f"{rec['backend']}-cg jacobi {label} n={n} nnz={a.nnz}: {iters} iterations in {secs:.3f} s "
        f"({rec['cg_us_per_iter']:.1f} us/iter), true rel res {rel:.2e} (via CSR SpMV {rel_csr:.2e}), {status}; "
        f"csr spmv {spmv_us:.1f} us ({rec['spmv_gb_per_s_csr_bytes']:.0f} GB/s CSR bytes, "
        f"{rec['spmv_gb_per_s_at_48B_per_row']:.0f} GB/s at 48 B/row)",
        flush=True,
    )
    return rec


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="+", help="exported system directories, or their parent")
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--max-iter", type=int, default=20000)
    p.add_argument("--budget-s", type=float, default=40.0, help="wall-clock cap per CG solve")
    p.add_argument("--reps", type=int, default=50, help="timed SpMV repetitions")
    p.add_argument("--json", type=Path, help="append one JSON line per system here")
    p.add_argument("--numpy", action="store_true", help="NumPy/SciPy on the CPU (script check)")
    args = p.parse_args()
    xp, sp, cg, linop, sync, gpu_us = load_backend(args.numpy)
    systems = find_systems(args.paths)
    if not systems:
        sys.exit(f"no exported systems (meta.json) under {args.paths}")
    if not args.numpy:
        dev = xp.cuda.Device()
        props = xp.cuda.runtime.getDeviceProperties(dev.id)
        print(f"CuPy {xp.__version__} on {props['name'].decode()}, cg{inspect.signature(cg)}", flush=True)
    for d in systems:
        rec = bench_one(d, args, xp, sp, cg, linop, sync, gpu_us)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(rec) + "\n")
        # Free the previous system's memory before the next, larger one.
        if not args.numpy:
            xp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
