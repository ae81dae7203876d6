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

// r = b - A x;  s[out] = r . r  (the true residual and its squared norm).
// Bytes per row: 4 matrix + b + x read + r written = 56 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
qd_residual_f64(const double* __restrict__ diag, const double* __restrict__ gx,
                const double* __restrict__ gy, const double* __restrict__ gz,
                const double* __restrict__ b, const double* __restrict__ x,
                double* __restrict__ r, long long n, long long sy, long long sz,
                int columns, double* __restrict__ partials,
                unsigned int* __restrict__ ticket, double* __restrict__ s, int out)
{
    double acc = 0.0;
    qd_for_each_row(diag, gx, gy, gz, x, n, sy, sz, columns,
                    [&](long long i, double ax, double) {
                        const double ri = __ldg(b + i) - ax;
                        r[i] = ri;
                        acc += ri * ri;
                    });
    cuth_reduce_finish(acc, partials, ticket, s, out);
}
