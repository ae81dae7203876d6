// Multigrid set-up family (issue 15): every coarse level of the geometric
// multigrid built on the device from the level above, so that the fine
// matrix never goes to the host. Needs common.cu (prepended). f64.
//
// The coarse operator is src/linalg/mg/coarsen.rs's `coarsen_with`, summed
// in the same order so that it rounds identically (the host's result, bit
// for bit): the aggregation comes as small host arrays per axis (coarse
// column k holds fine columns xs[k] .. xs[k+1]-1; face k's factor is
// fxn[k] / fxd[k]), so a change of aggregation needs no change here.
// Grids: cell i = x + nx*(y + ny*z), coarse ic = xc + nxc*(yc + nyc*z).

// Row i is an absent cell's identity row (no conductance, d = amb = 1).
__device__ __forceinline__ bool mgs_absent(const double* __restrict__ d,
                                           const double* __restrict__ gx,
                                           const double* __restrict__ gy,
                                           const double* __restrict__ gz,
                                           const double* __restrict__ amb,
                                           long long i, long long x, long long y,
                                           long long z, long long nx, long long plane)
{
    return d[i] == 1.0 && amb[i] == 1.0 && gx[i] == 0.0 && gy[i] == 0.0 &&
           gz[i] == 0.0 && (x == 0 || gx[i - 1] == 0.0) &&
           (y == 0 || gy[i - nx] == 0.0) && (z == 0 || gz[i - plane] == 0.0);
}

// One thread per coarse cell: z face and amb summed over the children (y
// outer, x inner; absent children add no amb), the x face summed over the
// aggregate's last fine column (in y) times its factor, likewise y. Writes
// every coarse cell of cgx, cgy, cgz, camb (0 on the last column / row).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mgs_coarsen_f64(const double* __restrict__ d, const double* __restrict__ gx,
                const double* __restrict__ gy, const double* __restrict__ gz,
                const double* __restrict__ amb, const long long* __restrict__ xs,
                const long long* __restrict__ ys, const double* __restrict__ fxn,
                const double* __restrict__ fxd, const double* __restrict__ fyn,
                const double* __restrict__ fyd, double* __restrict__ cgx,
                double* __restrict__ cgy, double* __restrict__ cgz,
                double* __restrict__ camb, long long nx, long long ny,
                long long nz, long long nxc, long long nyc)
{
    const long long plane = nx * ny;
    const long long cplane = nxc * nyc;
    for (long long ic = CUTH_ROW0; ic < cplane * nz; ic += CUTH_STRIDE) {
        const long long xc = ic % nxc;
        const long long yc = (ic % cplane) / nxc;
        const long long z = ic / cplane;
        const long long x0 = xs[xc], x1 = xs[xc + 1];
        const long long y0 = ys[yc], y1 = ys[yc + 1];
        double sz = 0.0, sa = 0.0;
        for (long long y = y0; y < y1; ++y) {
            for (long long x = x0; x < x1; ++x) {
                const long long i = x + nx * y + plane * z;
                sz += gz[i];
                if (!mgs_absent(d, gx, gy, gz, amb, i, x, y, z, nx, plane)) {
                    sa += amb[i];
                }
            }
        }
        cgz[ic] = sz;
        camb[ic] = sa;
        double fx = 0.0, fy = 0.0;
        if (xc + 1 < nxc) {
            double s = 0.0;
            for (long long y = y0; y < y1; ++y) {
                s += gx[(x1 - 1) + nx * y + plane * z];
            }
            fx = s * fxn[xc] / fxd[xc];
        }
        if (yc + 1 < nyc) {
            double s = 0.0;
            for (long long x = x0; x < x1; ++x) {
                s += gy[x + nx * (y1 - 1) + plane * z];
            }
            fy = s * fyn[yc] / fyd[yc];
        }
        cgx[ic] = fx;
        cgy[ic] = fy;
    }
}

// amb_i plus row i's six conductances, in coarsen.rs `fill_diagonal`'s order.
__device__ __forceinline__ double mgs_row_sum(const double* __restrict__ gx,
                                              const double* __restrict__ gy,
                                              const double* __restrict__ gz,
                                              double amb_i, long long i,
                                              long long nx, long long plane)
{
    double s = amb_i + gx[i] + gy[i] + gz[i];
    if (i % nx > 0) s += gx[i - 1];
    if (i % plane >= nx) s += gy[i - nx];
    if (i >= plane) s += gz[i - plane];
    return s;
}

// d = amb + the row's conductances; a row with none (all children absent)
// becomes an identity row (amb = d = 1), as `fill_diagonal` does.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mgs_diagonal_f64(const double* __restrict__ gx, const double* __restrict__ gy,
                 const double* __restrict__ gz, double* __restrict__ amb,
                 double* __restrict__ d, long long nx, long long plane,
                 long long n)
{
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        double a = amb[i];
        double s = mgs_row_sum(gx, gy, gz, a, i, nx, plane);
        if (s == 0.0) {
            a = 1.0;
            amb[i] = a;
            s = mgs_row_sum(gx, gy, gz, a, i, nx, plane);
        }
        d[i] = s;
    }
}

// 1/p_k of each z column's tridiagonal LU (coarsen.rs `line_pivots`):
// p_0 = d_0, p_k = d_k - gz_{k-1}^2 / p_{k-1}, one thread per column (threads
// take consecutive columns, so each plane's loads coalesce). Explicitly
// rounded products: no fused multiply-add, as on the host.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mgs_pivots_f64(const double* __restrict__ d, const double* __restrict__ gz,
               double* __restrict__ ip, long long plane, long long nz)
{
    for (long long j = CUTH_ROW0; j < plane; j += CUTH_STRIDE) {
        double prev = 0.0;
        for (long long k = 0; k < nz; ++k) {
            const long long i = j + k * plane;
            double p = d[i];
            if (k > 0) {
                const double g = gz[i - plane];
                p = __dsub_rn(p, __dmul_rn(__dmul_rn(g, g), prev));
            }
            prev = 1.0 / p;
            ip[i] = prev;
        }
    }
}
