// Quad-Diag family: kernels that apply the 7-point SPD matrix
//   A[i,i] = diag[i], A[i,i+1] = -gx[i], A[i,i+nx] = -gy[i], A[i,i+nx*ny] = -gz[i]
// (symmetric, so the lower neighbours use gx[i-1], gy[i-nx], gz[i-nx*ny]).
// One thread per row in a grid-stride loop; every array is read contiguously
// by consecutive threads (coalesced), the six neighbour reads of x hit L1/L2.
// The row formula qd_row lives in common.cu (prepended by the host), which
// chebyshev.cu shares.

// y = A x.
// Bytes per row (f64): diag, gx, gy, gz, x read + y written = 48 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
qd_spmv_f64(const double* __restrict__ diag, const double* __restrict__ gx,
            const double* __restrict__ gy, const double* __restrict__ gz,
            const double* __restrict__ x, double* __restrict__ y,
            long long n, long long sy, long long sz)
{
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        y[i] = qd_row(diag, gx, gy, gz, x, i, n, sy, sz);
    }
}

// q = A p;  s[out] = p . q  (the CG curvature p^T A p, fused with the SpMV).
// Bytes per row: 4 matrix + p read + q written = 48 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
qd_spmv_dot_f64(const double* __restrict__ diag, const double* __restrict__ gx,
                const double* __restrict__ gy, const double* __restrict__ gz,
                const double* __restrict__ p, double* __restrict__ q,
                long long n, long long sy, long long sz,
                double* __restrict__ partials, unsigned int* __restrict__ ticket,
                double* __restrict__ s, int out)
{
    double acc = 0.0;
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        const double qi = qd_row(diag, gx, gy, gz, p, i, n, sy, sz);
        q[i] = qi;
        acc += __ldg(p + i) * qi;
    }
    cuth_reduce_finish(acc, partials, ticket, s, out);
}

// r = b - A x;  s[out] = r . r  (the true residual and its squared norm).
// Bytes per row: 4 matrix + b + x read + r written = 56 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
qd_residual_f64(const double* __restrict__ diag, const double* __restrict__ gx,
                const double* __restrict__ gy, const double* __restrict__ gz,
                const double* __restrict__ b, const double* __restrict__ x,
                double* __restrict__ r, long long n, long long sy, long long sz,
                double* __restrict__ partials, unsigned int* __restrict__ ticket,
                double* __restrict__ s, int out)
{
    double acc = 0.0;
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        const double ri = __ldg(b + i) - qd_row(diag, gx, gy, gz, x, i, n, sy, sz);
        r[i] = ri;
        acc += ri * ri;
    }
    cuth_reduce_finish(acc, partials, ticket, s, out);
}
