// BLAS-1 family: the fused vector updates of PCG and the Jacobi
// preconditioner. One thread per row in a grid-stride loop, coalesced.
// Coefficients produced by earlier reductions are read from the device
// scalar buffer as a ratio s[num]/s[den] (0 when s[den] = 0, as on the CPU),
// so a CG iteration needs no host round trip. Needs common.cu (prepended).

// s[num] / s[den], or 0 when the denominator is 0 (CG has converged exactly).
// Plain loads: s may be written by this very kernel (s[out]) and by the
// previous one, so it is not read-only data.
__device__ __forceinline__ double cuth_ratio(const double* s, int num, int den)
{
    const double q = s[den];
    return q == 0.0 ? 0.0 : s[num] / q;
}

// s[out] = x . y.
// Bytes per row: x, y read = 16 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
blas1_dot_f64(const double* __restrict__ x, const double* __restrict__ y,
              long long n, double* __restrict__ partials,
              unsigned int* __restrict__ ticket, double* __restrict__ s, int out)
{
    double acc = 0.0;
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        acc += __ldg(x + i) * __ldg(y + i);
    }
    cuth_reduce_finish(acc, partials, ticket, s, out);
}

// alpha = s[num]/s[den];  x += alpha p;  r -= alpha q;  s[out] = r . r.
// Every block reads alpha before it publishes its partial, and s[out] is
// written only after all partials are in, so out may equal num or den.
// Bytes per row: p, q read, x and r read + written = 48 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
blas1_cg_update_f64(const double* __restrict__ p, const double* __restrict__ q,
                    double* __restrict__ x, double* __restrict__ r, long long n,
                    double* s, int num, int den, double* __restrict__ partials,
                    unsigned int* __restrict__ ticket, int out)
{
    const double alpha = cuth_ratio(s, num, den);
    double acc = 0.0;
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        x[i] += alpha * __ldg(p + i);
        const double ri = r[i] - alpha * __ldg(q + i);
        r[i] = ri;
        acc += ri * ri;
    }
    cuth_reduce_finish(acc, partials, ticket, s, out);
}

// beta = s[num]/s[den];  p = z + beta p.
// Bytes per row: z read, p read + written = 24 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
blas1_xpay_f64(const double* __restrict__ z, double* __restrict__ p, long long n,
               const double* s, int num, int den)
{
    const double beta = cuth_ratio(s, num, den);
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        p[i] = __ldg(z + i) + beta * p[i];
    }
}

// y = alpha x + beta y, the scalars from the host (BiCGStab reads its
// scalars back every iteration). With beta = 0, y is not read (as BLAS).
// Bytes per row: x read, y read + written = 24 B (16 B with beta = 0).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
blas1_axpby_f64(double alpha, const double* __restrict__ x, double beta,
                double* __restrict__ y, long long n)
{
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        const double ax = alpha * __ldg(x + i);
        y[i] = beta == 0.0 ? ax : ax + beta * y[i];
    }
}

// z = r / d element-wise: the Jacobi preconditioner z = D^-1 r with the
// diagonal d of any operator (Quad-Diag's d, the elastic operator's diag(K)).
// Bytes per row: r, d read + z written = 24 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
blas1_divide_f64(const double* __restrict__ r, const double* __restrict__ d,
                 double* __restrict__ z, long long n)
{
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        z[i] = __ldg(r + i) / __ldg(d + i);
    }
}

// out = w (*) x + b, element-wise (the transient right-hand side
// C/dt * theta^n + P). out may not alias the inputs.
// Bytes per row: w, x, b read + out written = 32 B (40 B with write-allocate).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
blas1_mul_add_f64(const double* __restrict__ w, const double* __restrict__ x,
                  const double* __restrict__ b, double* __restrict__ out, long long n)
{
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        out[i] = __ldg(w + i) * __ldg(x + i) + __ldg(b + i);
    }
}
