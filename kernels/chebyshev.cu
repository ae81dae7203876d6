// Chebyshev family: the vector steps of the Jacobi-scaled Chebyshev
// polynomial preconditioner (Saad, Alg. 12.1; see
// src/linalg/precond/chebyshev.rs for the recurrence and its coefficients)
// for any operator with a diagonal. No reductions. The scalar coefficients
// are host values fixed at setup, passed by value. Needs common.cu
// (prepended).

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

// Later steps for an operator known only through its action (matrix-free),
// after q = A d:  res -= q;  d_next = alpha d + beta D^-1 res;  z += d_next.
// (The Quad-Diag matrix fuses A d in: cheb_step_f64 in quad_diag.cu.)
// Bytes per row: q, diag, d read, res and z read + written, d_next
// written = 64 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
cheb_update_f64(const double* __restrict__ q, const double* __restrict__ diag,
                double alpha, double beta, const double* __restrict__ d,
                double* __restrict__ d_next, double* __restrict__ res,
                double* __restrict__ z, long long n)
{
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        const double ri = res[i] - __ldg(q + i);
        const double dn = alpha * __ldg(d + i) + beta * ri / __ldg(diag + i);
        res[i] = ri;
        d_next[i] = dn;
        z[i] += dn;
    }
}
