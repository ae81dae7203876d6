// Batched family: k right-hand sides at a time (src/linalg/batch, issue 16).
// Compiled with common.cu and mg.cu prepended (src/backend/cuda/batch.rs),
// so the multigrid kernels below run mg.cu's own bodies per vector.
//
// Layout: a batch vector is k vectors of n rows one after the other
// ([k][n]); vector j starts at j*n. Every kernel runs on a 2D grid whose
// y index is the vector j (blockIdx.y = j), x the row blocks as in the
// single-vector kernels; the matrix (shared by the k systems) is read by
// each vector's blocks and stays in L2 between them.
//
// Scalars: slot q of vector j is s[q + j] (the host passes q as a base
// index). `mask` is the base of the per-vector status (1 = iterating,
// 0 = converged, -1 = broke down): a vector whose status is <= 0 is
// skipped whole (its blocks return at once), which is how converged vectors
// drop out of the batch without host intervention; mask < 0 masks nothing.
//
// Reductions: one partial per (block, vector) in partials[j * gridDim.x +
// blockIdx.x] and one ticket per vector, finished by the last block of that
// vector as in common.cu (fixed order: bitwise reproducible run to run).

__device__ __forceinline__ bool bq_skip(const double* s, int mask)
{
    return mask >= 0 && s[mask + blockIdx.y] <= 0.0;
}

// Stage 2 of a per-vector reduction: returns true in thread 0 of the last
// block of vector blockIdx.y, with the vector's total in *total.
__device__ __forceinline__ bool bq_reduce(double v, double* __restrict__ partials,
                                          unsigned int* __restrict__ tickets,
                                          double* total)
{
    __shared__ bool am_last;
    double* part = partials + (long long)blockIdx.y * gridDim.x;
    unsigned int* ticket = tickets + blockIdx.y;
    v = cuth_block_sum(v);
    if (threadIdx.x == 0) {
        part[blockIdx.x] = v;
        __threadfence();
        const unsigned int t = atomicAdd(ticket, 1u);
        am_last = (t == gridDim.x - 1);
    }
    __syncthreads();
    if (!am_last) {
        return false;
    }
    __threadfence();
    double acc = 0.0;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += CUTH_BLOCK) {
        acc += __ldcg(part + b);
    }
    acc = cuth_block_sum(acc);
    if (threadIdx.x == 0) {
        *total = acc;
        *ticket = 0u;
        return true;
    }
    return false;
}

__device__ __forceinline__ double bq_ratio(const double* s, int num, int den)
{
    const double q = s[den + blockIdx.y];
    return q == 0.0 ? 0.0 : s[num + blockIdx.y] / q;
}

// s[out + j] = x_j . y_j.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
bq_dot_f64(const double* __restrict__ x, const double* __restrict__ y, long long n,
           double* __restrict__ partials, unsigned int* __restrict__ tickets,
           double* s, int out, int mask)
{
    if (bq_skip(s, mask)) return;
    const long long o = (long long)blockIdx.y * n;
    double acc = 0.0;
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        acc += __ldg(x + o + i) * __ldg(y + o + i);
    }
    double total;
    if (bq_reduce(acc, partials, tickets, &total)) s[out + blockIdx.y] = total;
}

// q_j = A p_j;  s[out + j] = p_j . q_j  (row schedule).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
bq_spmv_dot_f64(const double* __restrict__ diag, const double* __restrict__ gx,
                const double* __restrict__ gy, const double* __restrict__ gz,
                const double* __restrict__ p, double* __restrict__ q, long long n,
                long long sy, long long sz, double* __restrict__ partials,
                unsigned int* __restrict__ tickets, double* s, int out, int mask)
{
    if (bq_skip(s, mask)) return;
    const long long o = (long long)blockIdx.y * n;
    double* qj = q + o;
    double acc = 0.0;
    qd_for_each_row(diag, gx, gy, gz, p + o, n, sy, sz, 0,
                    [&](long long i, double ap, double p_i) {
                        qj[i] = ap;
                        acc += p_i * ap;
                    });
    double total;
    if (bq_reduce(acc, partials, tickets, &total)) s[out + blockIdx.y] = total;
}

// r_j = b_j - A x_j (difference form, as qd_residual_f64);  s[out + j] = r_j . r_j.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
bq_residual_f64(const double* __restrict__ amb, const double* __restrict__ gx,
                const double* __restrict__ gy, const double* __restrict__ gz,
                const double* __restrict__ b, const double* __restrict__ x,
                double* __restrict__ r, long long n, long long sy, long long sz,
                double* __restrict__ partials, unsigned int* __restrict__ tickets,
                double* s, int out, int mask)
{
    if (bq_skip(s, mask)) return;
    const long long o = (long long)blockIdx.y * n;
    const double* xj = x + o;
    double acc = 0.0;
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        const double xi = __ldg(xj + i);
        double y = __ldg(amb + i) * xi;
        if (i + 1 < n) y += __ldg(gx + i) * (xi - __ldg(xj + i + 1));
        if (i >= 1) y += __ldg(gx + i - 1) * (xi - __ldg(xj + i - 1));
        if (i + sy < n) y += __ldg(gy + i) * (xi - __ldg(xj + i + sy));
        if (i >= sy) y += __ldg(gy + i - sy) * (xi - __ldg(xj + i - sy));
        if (i + sz < n) y += __ldg(gz + i) * (xi - __ldg(xj + i + sz));
        if (i >= sz) y += __ldg(gz + i - sz) * (xi - __ldg(xj + i - sz));
        const double ri = __ldg(b + o + i) - y;
        r[o + i] = ri;
        acc += ri * ri;
    }
    double total;
    if (bq_reduce(acc, partials, tickets, &total)) s[out + blockIdx.y] = total;
}

// alpha = s[num+j]/s[den+j];  x_j += alpha p_j;  r_j -= alpha q_j;
// s[rr+j] = r_j . r_j; then, in the last block, the per-vector stopping
// test of PCG (src/linalg/pcg.rs): status -1 (breakdown) when p.Ap is not
// positive or r.r not finite, 0 (converged) when r.r <= s[tol+j]; the
// iteration `iter` is recorded in s[iters+j] when the status changes.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
bq_cg_update_f64(const double* __restrict__ p, const double* __restrict__ q,
                 double* __restrict__ x, double* __restrict__ r, long long n,
                 double* s, int num, int den, double* __restrict__ partials,
                 unsigned int* __restrict__ tickets, int rr, int tol, int mask,
                 int iters, double iter)
{
    if (bq_skip(s, mask)) return;
    const double alpha = bq_ratio(s, num, den);
    const long long o = (long long)blockIdx.y * n;
    double acc = 0.0;
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        x[o + i] += alpha * __ldg(p + o + i);
        const double ri = r[o + i] - alpha * __ldg(q + o + i);
        r[o + i] = ri;
        acc += ri * ri;
    }
    double total;
    if (bq_reduce(acc, partials, tickets, &total)) {
        const int j = blockIdx.y;
        s[rr + j] = total;
        const double pq = s[den + j];
        if (!(pq > 0.0) || !isfinite(total)) {
            s[mask + j] = -1.0;
            s[iters + j] = iter;
        } else if (total <= s[tol + j]) {
            s[mask + j] = 0.0;
            s[iters + j] = iter;
        }
    }
}

// beta = s[num+j]/s[den+j];  p_j = z_j + beta p_j.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
bq_xpay_f64(const double* __restrict__ z, double* __restrict__ p, long long n,
            const double* s, int num, int den, int mask)
{
    if (bq_skip(s, mask)) return;
    const double beta = bq_ratio(s, num, den);
    const long long o = (long long)blockIdx.y * n;
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        p[o + i] = __ldg(z + o + i) + beta * p[o + i];
    }
}

// The multigrid operations of mg.cu, vector blockIdx.y of the batch.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
bq_mg_smooth_f64(const double* __restrict__ gx, const double* __restrict__ gy,
                 const double* __restrict__ gz, const double* __restrict__ ip,
                 const double* __restrict__ b, double* x, long long nx, long long ny,
                 long long nz, int colour, int zero, const long long* __restrict__ made,
                 const double* s, int mask)
{
    if (bq_skip(s, mask)) return;
    const long long o = (long long)blockIdx.y * nx * ny * nz;
    mg_smooth_body(gx, gy, gz, ip, b + o, x + o, nx, ny, nz, colour, zero, made);
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
bq_mg_restrict_f64(const double* __restrict__ diag, const double* __restrict__ gx,
                   const double* __restrict__ gy, const double* __restrict__ gz,
                   const double* __restrict__ b, const double* __restrict__ x,
                   double* __restrict__ bc, long long nx, long long ny, long long nz,
                   long long nxc, long long nyc, const long long* __restrict__ maps,
                   const double* s, int mask)
{
    if (bq_skip(s, mask)) return;
    const long long o = (long long)blockIdx.y * nx * ny * nz;
    const long long oc = (long long)blockIdx.y * nxc * nyc * nz;
    mg_restrict_body(diag, gx, gy, gz, b + o, x + o, bc + oc, nx, ny, nz, nxc, nyc, maps);
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
bq_mg_prolong_f64(const double* __restrict__ xc, double* __restrict__ x, long long nx,
                  long long ny, long long nz, long long nxc, long long nyc,
                  const long long* __restrict__ maps, const double* s, int mask)
{
    if (bq_skip(s, mask)) return;
    const long long o = (long long)blockIdx.y * nx * ny * nz;
    const long long oc = (long long)blockIdx.y * nxc * nyc * nz;
    mg_prolong_body(xc + oc, x + o, nx, ny, nz, nxc, nyc, maps);
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
bq_mg_dense_f64(const double* __restrict__ m, const double* __restrict__ b,
                double* __restrict__ x, long long n, const double* s, int mask)
{
    if (bq_skip(s, mask)) return;
    const long long o = (long long)blockIdx.y * n;
    mg_dense_body(m, b + o, x + o, n);
}
