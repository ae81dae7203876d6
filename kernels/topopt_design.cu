// Topopt design family: the design-field half of the SIMP loop on the device
// (src/topopt/design.rs states each operation; src/topopt/cuda/design.rs
// launches them). One thread per element in a grid-stride loop; kernels
// that produce a scalar reduce it with common.cu's deterministic two-stage
// reduction (grid from ReduceScratch::config), so nothing but the scalar
// slot is read back.
//
// Element e = ex + nx*(ey + ny*ez). The density filter is the cone
// w = rmin - |d| > 0 over offsets |d_i| <= r = ceil(rmin), summed in the
// host's order (dz, dy, dx ascending; src/topopt/filter.rs), weights
// computed on the fly; h holds the row sums H_e.

#define TD_E0 1.0
#define TD_EMIN 1e-9
#define TD_ETA 0.5

// (W x)_e: the unnormalized cone filter of x at element (ex, ey, ez).
__device__ __forceinline__ double td_gather(const double* __restrict__ x, int ex, int ey, int ez,
                                            int nx, int ny, int nz, int r, double rmin)
{
    double acc = 0.0;
    for (int dz = -r; dz <= r; ++dz) {
        const int l = ez + dz;
        if (l < 0 || l >= nz) continue;
        for (int dy = -r; dy <= r; ++dy) {
            const int j = ey + dy;
            if (j < 0 || j >= ny) continue;
            for (int dx = -r; dx <= r; ++dx) {
                const int i = ex + dx;
                if (i < 0 || i >= nx) continue;
                const double w = rmin - sqrt((double)(dx * dx + dy * dy + dz * dz));
                if (w > 0.0) {
                    acc += w * x[i + (long long)nx * (j + (long long)ny * l)];
                }
            }
        }
    }
    return acc;
}

__device__ __forceinline__ void td_coords(long long e, int nx, int ny, int* ex, int* ey, int* ez)
{
    *ex = (int)(e % nx);
    *ey = (int)((e / nx) % ny);
    *ez = (int)(e / ((long long)nx * ny));
}

// Max over the block (values >= 0); valid in thread 0.
__device__ __forceinline__ double td_block_max(double v)
{
    __shared__ double warp_part[CUTH_BLOCK / 32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
    __syncthreads();
    if (lane == 0) warp_part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = (lane < CUTH_BLOCK / 32) ? warp_part[lane] : 0.0;
        for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
    }
    return v;
}

// cuth_reduce_finish with max instead of sum.
__device__ __forceinline__ void td_reduce_max_finish(double v, double* __restrict__ partials,
                                                     unsigned int* __restrict__ ticket,
                                                     double* __restrict__ s, int out)
{
    __shared__ bool am_last;
    v = td_block_max(v);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        __threadfence();
        const unsigned int t = atomicAdd(ticket, 1u);
        am_last = (t == gridDim.x - 1);
    }
    __syncthreads();
    if (!am_last) return;
    __threadfence();
    double acc = 0.0;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += CUTH_BLOCK) {
        acc = fmax(acc, __ldcg(partials + b));
    }
    acc = td_block_max(acc);
    if (threadIdx.x == 0) {
        s[out] = acc;
        *ticket = 0u;
    }
}

// filtered = W x / H; rho = passive(H_beta(filtered)); slope = d rho / d filtered
// (0 on passive); E = Emin + rho^p (E0 - Emin) in f64 and f32; s[out] = sum rho.
// mask: 0 design, 1 solid, 2 void. pa = tanh(beta eta), pd = pa + tanh(beta (1 - eta)).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
tdes_physical(const double* __restrict__ x, const double* __restrict__ h,
              const unsigned char* __restrict__ mask, double* __restrict__ filtered,
              double* __restrict__ rho, double* __restrict__ slope, double* __restrict__ e64,
              float* __restrict__ e32, long long n, int nx, int ny, int nz, int r, double rmin,
              double beta, double pa, double pd, double penal, double* __restrict__ partials,
              unsigned int* __restrict__ ticket, double* __restrict__ s, int out)
{
    double acc = 0.0;
    for (long long e = CUTH_ROW0; e < n; e += CUTH_STRIDE) {
        int ex, ey, ez;
        td_coords(e, nx, ny, &ex, &ey, &ez);
        const double f = td_gather(x, ex, ey, ez, nx, ny, nz, r, rmin) / h[e];
        filtered[e] = f;
        const double t = tanh(beta * (f - TD_ETA));
        double p = (pa + t) / pd;
        double sl = beta * (1.0 - t * t) / pd;
        const unsigned char k = mask[e];
        if (k == 1) p = 1.0;
        if (k == 2) p = 0.0;
        if (k != 0) sl = 0.0;
        rho[e] = p;
        slope[e] = sl;
        const double em = TD_EMIN + pow(p, penal) * (TD_E0 - TD_EMIN);
        e64[e] = em;
        e32[e] = (float)em;
        acc += p;
    }
    cuth_reduce_finish(acc, partials, ticket, s, out);
}

// s[out] = sum of: mode 0 a(1 - a); mode 1 a b; mode 2 [a > 0].
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
tdes_sum(const double* __restrict__ a, const double* __restrict__ b, long long n, int mode,
         double* __restrict__ partials, unsigned int* __restrict__ ticket,
         double* __restrict__ s, int out)
{
    double acc = 0.0;
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        const double v = a[i];
        acc += mode == 0 ? v * (1.0 - v) : mode == 1 ? v * b[i] : (v > 0.0 ? 1.0 : 0.0);
    }
    cuth_reduce_finish(acc, partials, ticket, s, out);
}

// s[out] = max |a - b|.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
tdes_max_abs_diff(const double* __restrict__ a, const double* __restrict__ b, long long n,
                  double* __restrict__ partials, unsigned int* __restrict__ ticket,
                  double* __restrict__ s, int out)
{
    double acc = 0.0;
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        acc = fmax(acc, fabs(a[i] - b[i]));
    }
    td_reduce_max_finish(acc, partials, ticket, s, out);
}

// The chain rule before the filter transpose, each divided by H (W is
// symmetric, so F^T g = W (g / H)): dct = -p rho^(p-1) (E0 - Emin) c slope / H,
// dvt = slope / N / H; s[out] = sum E c (the compliance).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
tdes_sens(const double* __restrict__ c, const double* __restrict__ e64,
          const double* __restrict__ rho, const double* __restrict__ slope,
          const double* __restrict__ h, double* __restrict__ dct, double* __restrict__ dvt,
          long long n, double penal, double count, double* __restrict__ partials,
          unsigned int* __restrict__ ticket, double* __restrict__ s, int out)
{
    double acc = 0.0;
    for (long long e = CUTH_ROW0; e < n; e += CUTH_STRIDE) {
        const double ce = c[e];
        acc += e64[e] * ce;
        const double sl = slope[e];
        dct[e] = -penal * pow(rho[e], penal - 1.0) * (TD_E0 - TD_EMIN) * ce * sl / h[e];
        dvt[e] = sl / count / h[e];
    }
    cuth_reduce_finish(acc, partials, ticket, s, out);
}

// oa = W a, ob = W b (the filter transposes of dc and dv).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
tdes_gather2(const double* __restrict__ a, const double* __restrict__ b, double* __restrict__ oa,
             double* __restrict__ ob, long long n, int nx, int ny, int nz, int r, double rmin)
{
    for (long long e = CUTH_ROW0; e < n; e += CUTH_STRIDE) {
        int ex, ey, ez;
        td_coords(e, nx, ny, &ex, &ey, &ez);
        oa[e] = td_gather(a, ex, ey, ez, nx, ny, nz, r, rmin);
        ob[e] = td_gather(b, ex, ey, ez, nx, ny, nz, r, rmin);
    }
}

// ratio = -dc/dv (-1 where dv <= 1e-300); root = sqrt(ratio) on design
// elements with ratio >= 0, else -1; s[out] = sum ln ratio over design
// elements with ratio > 0.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
tdes_oc_root(const double* __restrict__ dc, const double* __restrict__ dv,
             const unsigned char* __restrict__ mask, double* __restrict__ root, long long n,
             double* __restrict__ partials, unsigned int* __restrict__ ticket,
             double* __restrict__ s, int out)
{
    double acc = 0.0;
    for (long long e = CUTH_ROW0; e < n; e += CUTH_STRIDE) {
        const double v = dv[e];
        const double ratio = v > 1e-300 ? fmax(-dc[e], 0.0) / v : -1.0;
        const bool design = mask[e] == 0;
        root[e] = (design && ratio >= 0.0) ? sqrt(ratio) : -1.0;
        if (design && ratio > 0.0) acc += log(ratio);
    }
    cuth_reduce_finish(acc, partials, ticket, s, out);
}

// The OC trial of scale 1/sqrt(lambda): x_new = clamp(x root scale,
// [x - move, x + move] n [0, 1]), x kept where root < 0.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
tdes_oc_trial(const double* __restrict__ x, const double* __restrict__ root,
              double* __restrict__ x_new, long long n, double scale, double move)
{
    for (long long e = CUTH_ROW0; e < n; e += CUTH_STRIDE) {
        const double xi = x[e], q = root[e];
        x_new[e] = q < 0.0 ? xi
                           : fmin(fmax(xi * q * scale, fmax(xi - move, 0.0)), fmin(xi + move, 1.0));
    }
}

// s[out] = sum passive(H_beta(W y / H)), the projection in the host's
// exp form (src/topopt/projection.rs, `projector`).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
tdes_volume(const double* __restrict__ y, const double* __restrict__ h,
            const unsigned char* __restrict__ mask, long long n, int nx, int ny, int nz, int r,
            double rmin, double beta, double pa, double pd, double* __restrict__ partials,
            unsigned int* __restrict__ ticket, double* __restrict__ s, int out)
{
    double acc = 0.0;
    for (long long e = CUTH_ROW0; e < n; e += CUTH_STRIDE) {
        const unsigned char k = mask[e];
        if (k == 1) {
            acc += 1.0;
        } else if (k == 0) {
            int ex, ey, ez;
            td_coords(e, nx, ny, &ex, &ey, &ez);
            const double f = td_gather(y, ex, ey, ez, nx, ny, nz, r, rmin) / h[e];
            acc += (pa + 1.0 - 2.0 / (exp(2.0 * beta * (f - TD_ETA)) + 1.0)) / pd;
        }
    }
    cuth_reduce_finish(acc, partials, ticket, s, out);
}
