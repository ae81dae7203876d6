// Quad-Diag family: kernels that apply the 7-point SPD matrix (its row
// formula and the two thread schedules, `columns` = 0 or 1, are in
// common.cu, prepended by the host and shared with chebyshev.cu). Every
// array is read contiguously by consecutive threads (coalesced).
//
// Bytes per row below are the DRAM floor (each array once); the row
// schedule reaches it only while a z plane stays in L2 (see common.cu).

// y = A x.
// Bytes per row (f64): diag, gx, gy, gz, x read + y written = 48 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
qd_spmv_f64(const double* __restrict__ diag, const double* __restrict__ gx,
            const double* __restrict__ gy, const double* __restrict__ gz,
            const double* __restrict__ x, double* __restrict__ y,
            long long n, long long sy, long long sz, int columns)
{
    qd_for_each_row(diag, gx, gy, gz, x, n, sy, sz, columns,
                    [&](long long i, double ax, double) { y[i] = ax; });
}

// q = A p;  s[out] = p . q  (the CG curvature p^T A p, fused with the SpMV).
// Bytes per row: 4 matrix + p read + q written = 48 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
qd_spmv_dot_f64(const double* __restrict__ diag, const double* __restrict__ gx,
                const double* __restrict__ gy, const double* __restrict__ gz,
                const double* __restrict__ p, double* __restrict__ q,
                long long n, long long sy, long long sz, int columns,
                double* __restrict__ partials, unsigned int* __restrict__ ticket,
                double* __restrict__ s, int out)
{
    double acc = 0.0;
    qd_for_each_row(diag, gx, gy, gz, p, n, sy, sz, columns,
                    [&](long long i, double ap, double p_i) {
                        q[i] = ap;
                        acc += p_i * ap;
                    });
    cuth_reduce_finish(acc, partials, ticket, s, out);
}

// r = b - A x;  s[out] = r . r  (the true residual and its squared norm),
// formed from differences: (A x)[i] = amb[i] x[i] + sum_j g_ij (x[i] - x[j]),
// amb = d minus the row's off-diagonal sum, stored exactly. The diagonal form
// cancels catastrophically in nearly uniform regions (see quad_diag.rs, the
// host side); this form does not, so PCG's restarts and the reported residual
// are accurate. One thread per row whatever the SpMV schedule (rare kernel).
// Bytes per row: amb, gx, gy, gz, b, x read + r written = 56 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
qd_residual_f64(const double* __restrict__ amb, const double* __restrict__ gx,
                const double* __restrict__ gy, const double* __restrict__ gz,
                const double* __restrict__ b, const double* __restrict__ x,
                double* __restrict__ r, long long n, long long sy, long long sz,
                double* __restrict__ partials, unsigned int* __restrict__ ticket,
                double* __restrict__ s, int out)
{
    double acc = 0.0;
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        const double xi = __ldg(x + i);
        double y = __ldg(amb + i) * xi;
        if (i + 1 < n) y += __ldg(gx + i) * (xi - __ldg(x + i + 1));
        if (i >= 1) y += __ldg(gx + i - 1) * (xi - __ldg(x + i - 1));
        if (i + sy < n) y += __ldg(gy + i) * (xi - __ldg(x + i + sy));
        if (i >= sy) y += __ldg(gy + i - sy) * (xi - __ldg(x + i - sy));
        if (i + sz < n) y += __ldg(gz + i) * (xi - __ldg(x + i + sz));
        if (i >= sz) y += __ldg(gz + i - sz) * (xi - __ldg(x + i - sz));
        const double ri = __ldg(b + i) - y;
        r[i] = ri;
        acc += ri * ri;
    }
    cuth_reduce_finish(acc, partials, ticket, s, out);
}

// The Chebyshev preconditioner's later step (src/linalg/precond/chebyshev.rs),
// fused with A d so that the matrix is read once.
// res -= A d;  d_next = alpha d + beta D^-1 res;  z += d_next.
// Bytes per row: 4 matrix + d read, res and z read + written, d_next
// written = 80 B (DRAM floor; schedule as in common.cu).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
cheb_step_f64(const double* __restrict__ diag, const double* __restrict__ gx,
              const double* __restrict__ gy, const double* __restrict__ gz,
              double alpha, double beta, const double* __restrict__ d,
              double* __restrict__ d_next, double* __restrict__ res,
              double* __restrict__ z, long long n, long long sy, long long sz,
              int columns)
{
    qd_for_each_row(diag, gx, gy, gz, d, n, sy, sz, columns,
                    [&](long long i, double ad, double d_i) {
                        const double ri = res[i] - ad;
                        const double dn = alpha * d_i + beta * ri / __ldg(diag + i);
                        res[i] = ri;
                        d_next[i] = dn;
                        z[i] += dn;
                    });
}
