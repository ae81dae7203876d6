// Chebyshev family: the two kernels of the Jacobi-scaled Chebyshev
// polynomial preconditioner (Saad, Alg. 12.1; see
// src/linalg/precond/chebyshev.rs for the recurrence and its coefficients).
// Only SpMV and vector updates, no reductions. The scalar coefficients are
// host values fixed at setup, passed by value. Needs common.cu (prepended),
// which holds the Quad-Diag row and its two thread schedules.

// First step: res = r;  d = c D^-1 r;  z = d   (c = 1/theta).
// Bytes per row: diag, r read + res, d, z written = 40 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
cheb_init_f64(const double* __restrict__ diag, double c,
              const double* __restrict__ r, double* __restrict__ res,
              double* __restrict__ d, double* __restrict__ z, long long n)
{
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        const double ri = __ldg(r + i);
        const double di = c * ri / __ldg(diag + i);
        res[i] = ri;
        d[i] = di;
        z[i] = di;
    }
}

// Later steps: res -= A d;  d_next = alpha d + beta D^-1 res;  z += d_next.
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
