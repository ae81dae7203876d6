// Nonlinear family (issue 17): what the outer (Picard / Anderson) iteration
// of a temperature-dependent steady solve does to its fields where they
// live, so that the temperature never leaves the GPU inside the loop: a
// vector update, the reductions the loop's decisions read (max change,
// hottest cell, range), and the leakage power (src/thermal/nonlinear/
// leakage.rs). Every operation is rounded as the host's (explicit __d*_rn,
// no contraction); sums go through the deterministic reduction of
// common.cu, max/min reductions are exact in any order.

// +inf (NVRTC has no math.h macros).
#define NL_INF __longlong_as_double(0x7ff0000000000000LL)

#define NL_BLOCK_RANGE(i, n) \
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); \
         i += (long long)gridDim.x * blockDim.x)

// y = alpha x + beta y + gamma, each term taken only when its coefficient
// is not 0 (so x need not be valid when alpha = 0 and y is not read when
// beta = 0), summed left to right; 0 when all three are 0.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
nl_axpby_f64(const double* __restrict__ x, double alpha, double beta, double gamma,
             double* __restrict__ y, long long n)
{
    NL_BLOCK_RANGE(i, n)
    {
        double v = 0.0;
        bool has = false;
        if (alpha != 0.0) {
            v = __dmul_rn(alpha, x[i]);
            has = true;
        }
        if (beta != 0.0) {
            const double t = __dmul_rn(beta, y[i]);
            v = has ? __dadd_rn(v, t) : t;
            has = true;
        }
        if (gamma != 0.0)
            v = has ? __dadd_rn(v, gamma) : gamma;
        y[i] = v;
    }
}

// Max (op 1) or min (op 2) over the block then the grid, as common.cu's sum
// (fmax/fmin: NaN is ignored, as Rust's f64::max/min).
__device__ __forceinline__ double nl_op(int op, double a, double b)
{
    return op == 1 ? fmax(a, b) : fmin(a, b);
}

__device__ __forceinline__ double nl_block_op(int op, double v, double ident)
{
    __shared__ double part[CUTH_BLOCK / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1)
        v = nl_op(op, v, __shfl_down_sync(0xffffffffu, v, o));
    __syncthreads();
    if (lane == 0)
        part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < CUTH_BLOCK / 32 ? part[lane] : ident;
        for (int o = 16; o > 0; o >>= 1)
            v = nl_op(op, v, __shfl_down_sync(0xffffffffu, v, o));
    }
    return v;
}

__device__ __forceinline__ void nl_finish_op(int op, double ident, double v,
                                             double* __restrict__ partials,
                                             unsigned int* __restrict__ ticket,
                                             double* __restrict__ s, int out)
{
    __shared__ bool am_last;
    v = nl_block_op(op, v, ident);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        __threadfence();
        const unsigned int t = atomicAdd(ticket, 1u);
        am_last = (t == gridDim.x - 1);
    }
    __syncthreads();
    if (!am_last)
        return;
    __threadfence();
    double acc = ident;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += CUTH_BLOCK)
        acc = nl_op(op, acc, __ldcg(partials + b));
    acc = nl_block_op(op, acc, ident);
    if (threadIdx.x == 0) {
        s[out] = acc;
        *ticket = 0u;
    }
}

// One reduction of x (and y) into s[out]:
//   mode 0: sum of x;
//   mode 1: max |(x + shift) - (y + shift)| (from 0);
//   mode 2: max of key(x + shift), key(v) = v when finite, else +inf;
//   mode 3: first index i with key(x_i + shift) == param (+inf when none);
//   mode 4: min of x;  mode 5: max of x;  mode 6: count of non-finite x.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
nl_reduce_f64(const double* __restrict__ x, const double* __restrict__ y, double shift,
              double param, long long n, int mode, double* __restrict__ partials,
              unsigned int* __restrict__ ticket, double* __restrict__ s, int out)
{
    const int op = (mode == 0 || mode == 6) ? 0 : ((mode == 3 || mode == 4) ? 2 : 1);
    const double ident = op == 0 ? 0.0 : (op == 1 ? (mode == 1 ? 0.0 : -NL_INF) : NL_INF);
    double acc = ident;
    NL_BLOCK_RANGE(i, n)
    {
        const double v = x[i];
        double k;
        switch (mode) {
        case 0: acc = __dadd_rn(acc, v); continue;
        case 1:
            k = fabs(__dsub_rn(__dadd_rn(v, shift), __dadd_rn(y[i], shift)));
            break;
        case 2: {
            const double t = __dadd_rn(v, shift);
            k = isfinite(t) ? t : NL_INF;
            break;
        }
        case 3: {
            const double t = __dadd_rn(v, shift);
            k = (isfinite(t) ? t : NL_INF) == param ? (double)i : NL_INF;
            break;
        }
        case 6: acc = __dadd_rn(acc, isfinite(v) ? 0.0 : 1.0); continue;
        default: k = v;
        }
        acc = nl_op(op, acc, k);
    }
    if (op == 0)
        cuth_reduce_finish(acc, partials, ticket, s, out);
    else
        nl_finish_op(op, ident, acc, partials, ticket, s, out);
}

// Column mean temperature of plane cell j over a layer's z cells
// z0 .. z0+nzl, T = theta + t_amb, summed bottom up as the host.
__device__ __forceinline__ double lk_column(const double* __restrict__ theta, double t_amb,
                                            long long j, long long z0, long long nzl,
                                            long long plane)
{
    double sum = 0.0;
    for (long long z = z0; z < z0 + nzl; ++z)
        sum = __dadd_rn(sum, __dadd_rn(theta[z * plane + j], t_amb));
    return __ddiv_rn(sum, (double)nzl);
}

// One leaking source (m plane cells `cells` with weights w on a layer's z
// cells z0 .. z0+nzl): s[out] = sum of w * T_col (a region: its mean
// temperature), or, per cell (per_cell = 1), p = w * p_ref exp(beta (T_col -
// t_ref)) added to cellw over the z cells (p / nzl each) and s[out] = sum of p.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
lk_source_f64(const double* __restrict__ theta, double t_amb,
              const long long* __restrict__ cells, const double* __restrict__ w, long long m,
              long long z0, long long nzl, long long plane, int per_cell, double p_ref,
              double beta, double t_ref, double* __restrict__ cellw,
              double* __restrict__ partials, unsigned int* __restrict__ ticket,
              double* __restrict__ s, int out)
{
    double acc = 0.0;
    NL_BLOCK_RANGE(e, m)
    {
        const long long j = cells[e];
        const double tc = lk_column(theta, t_amb, j, z0, nzl, plane);
        if (per_cell) {
            const double p =
                __dmul_rn(w[e], __dmul_rn(p_ref, exp(__dmul_rn(beta, __dsub_rn(tc, t_ref)))));
            const double q = __ddiv_rn(p, (double)nzl);
            for (long long z = z0; z < z0 + nzl; ++z)
                cellw[z * plane + j] = __dadd_rn(cellw[z * plane + j], q);
            acc = __dadd_rn(acc, p);
        } else {
            acc = __dadd_rn(acc, __dmul_rn(w[e], tc));
        }
    }
    cuth_reduce_finish(acc, partials, ticket, s, out);
}

// A region's leakage `total` spread over its cells: cellw += total * w / nzl
// on each of the layer's z cells.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
lk_spread_f64(const long long* __restrict__ cells, const double* __restrict__ w, long long m,
              long long z0, long long nzl, long long plane, double total,
              double* __restrict__ cellw)
{
    NL_BLOCK_RANGE(e, m)
    {
        const long long j = cells[e];
        const double q = __ddiv_rn(__dmul_rn(total, w[e]), (double)nzl);
        for (long long z = z0; z < z0 + nzl; ++z)
            cellw[z * plane + j] = __dadd_rn(cellw[z * plane + j], q);
    }
}
