// The post-solve statistics reduced on the device (issue 15), so that only
// what the outputs need comes down: per (z plane, chunk of the plane) the
// partials of src/thermal/field_stats.rs (min and area-weighted sum over
// present cells, the hottest cell, the heat through the top and bottom
// films), layer maps (mean over a layer's z cells, summed in z order as the
// host's fold), probe cells gathered, chunked plane sums, and per-block
// statistics over a layer map (stats_blocks_f64). Deterministic:
// each block covers one fixed chunk with a fixed thread→cell mapping and a
// fixed reduction tree, and the host adds the chunks in order; no atomics.
//
// The solver's x is shifted: theta = x + c, T = theta + ambient, rounded as
// the host's fold rounds them.

#define STATS_INF __longlong_as_double(0x7ff0000000000000LL)

// One thread's (or block's) running statistics, as the host's `Acc`.
struct StatsAcc {
    double min, sum, weight, max, top, bottom;
    long long imax;
};

__device__ __forceinline__ void stats_merge(StatsAcc& a, const StatsAcc& o)
{
    a.min = fmin(a.min, o.min);
    a.sum = __dadd_rn(a.sum, o.sum);
    a.weight = __dadd_rn(a.weight, o.weight);
    // The first (lowest index) of equal maxima, as the host's fold.
    if (o.max > a.max || (o.max == a.max && o.imax < a.imax)) {
        a.max = o.max;
        a.imax = o.imax;
    }
    a.top = __dadd_rn(a.top, o.top);
    a.bottom = __dadd_rn(a.bottom, o.bottom);
}

// Grid (chunks per plane, nz), CUTH_BLOCK threads; block (k, z) covers cells
// [k*span, min((k+1)*span, plane)) of plane z and writes out[7*(z*chunks+k)
// ..]: min, sum, weight, max, top, bottom, imax (as a double: exact below
// 2^53 cells). absent: per z an offset into absent_planes (one byte per plane
// cell, 1 = absent) or -1 (none); weighted[z]: weigh by the cell area
// dx[x]*dy[y], else by 1. g_top / g_bottom: the films, read on the top
// (z = nz-1) and bottom (z = 0) planes only.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
stats_planes_f64(const double* __restrict__ x, double c, double ambient,
                 long long nx, long long plane, long long nz, long long span,
                 const unsigned char* __restrict__ absent_planes,
                 const long long* __restrict__ absent_off,
                 const int* __restrict__ weighted,
                 const double* __restrict__ dx, const double* __restrict__ dy,
                 const double* __restrict__ g_top, const double* __restrict__ g_bottom,
                 double* __restrict__ out)
{
    const long long z = blockIdx.y, k = blockIdx.x;
    const long long j0 = k * span;
    const long long j1 = min(j0 + span, plane);
    const long long base = z * plane;
    const long long aoff = absent_off[z];
    const bool weigh = weighted[z] != 0;
    const bool is_top = z == nz - 1, is_bottom = z == 0;
    StatsAcc a = {STATS_INF, 0.0, 0.0, -STATS_INF, 0.0, 0.0, base + j0};
    for (long long j = j0 + threadIdx.x; j < j1; j += CUTH_BLOCK) {
        const double theta = __dadd_rn(x[base + j], c);
        const double t = __dadd_rn(theta, ambient);
        if (t > a.max) {
            a.max = t;
            a.imax = base + j;
        }
        if (aoff < 0 || absent_planes[aoff + j] == 0) {
            a.min = fmin(a.min, t);
            const double w = weigh ? __dmul_rn(dx[j % nx], dy[j / nx]) : 1.0;
            a.sum = __dadd_rn(a.sum, __dmul_rn(w, t));
            a.weight = __dadd_rn(a.weight, w);
        }
        if (is_top)
            a.top = __dadd_rn(a.top, __dmul_rn(g_top[j], theta));
        if (is_bottom)
            a.bottom = __dadd_rn(a.bottom, __dmul_rn(g_bottom[j], theta));
    }
    // Fixed tree over the block's threads (shared memory, halving).
    __shared__ StatsAcc acc[CUTH_BLOCK];
    acc[threadIdx.x] = a;
    __syncthreads();
    for (int s = CUTH_BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            StatsAcc m = acc[threadIdx.x];
            stats_merge(m, acc[threadIdx.x + s]);
            acc[threadIdx.x] = m;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const StatsAcc& r = acc[0];
        double* o = out + 7 * (z * gridDim.x + k);
        o[0] = r.min;
        o[1] = r.sum;
        o[2] = r.weight;
        o[3] = r.max;
        o[4] = r.top;
        o[5] = r.bottom;
        o[6] = (double)r.imax;
    }
}

// map[j] = sum over z in [z0, z1) of T(z, j), in z order from 0 (the host's
// fold adds each plane to a zeroed map in the same order); the host divides
// by the layer's z cells.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
stats_layer_map_f64(const double* __restrict__ x, double c, double ambient,
                    long long plane, long long z0, long long z1,
                    double* __restrict__ map)
{
    for (long long j = CUTH_ROW0; j < plane; j += CUTH_STRIDE) {
        double s = 0.0;
        for (long long z = z0; z < z1; ++z) {
            s = __dadd_rn(s, __dadd_rn(__dadd_rn(x[z * plane + j], c), ambient));
        }
        map[j] = s;
    }
}

// out[i] = x[idx[i]] (the probes' cells).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
stats_gather_f64(const double* __restrict__ x, const long long* __restrict__ idx,
                 long long m, double* __restrict__ out)
{
    for (long long i = CUTH_ROW0; i < m; i += CUTH_STRIDE) {
        out[i] = x[idx[i]];
    }
}

// out[k] = sum of v over chunk k = [k*span, min((k+1)*span, n)), one block
// per chunk with a fixed tree; the host adds the chunks in order.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
stats_chunk_sums_f64(const double* __restrict__ v, long long n, long long span,
                     double* __restrict__ out)
{
    const long long j0 = (long long)blockIdx.x * span;
    const long long j1 = min(j0 + span, n);
    double s = 0.0;
    for (long long j = j0 + threadIdx.x; j < j1; j += CUTH_BLOCK) {
        s = __dadd_rn(s, v[j]);
    }
    s = cuth_block_sum(s);
    if (threadIdx.x == 0) {
        out[blockIdx.x] = s;
    }
}

// Per-block statistics over a layer map (issue 15; the host's side is
// src/thermal/block_stats_device.rs). `sum` is the layer map as
// stats_layer_map_f64 leaves it (Σ over the layer's z cells of T); T of a
// cell is sum / cells, NaN where absent (absent_planes at aoff, or none for
// aoff < 0), as the outputs mark it. A block's cells are its rows × its
// columns, row by row, cell weight ox·oy (the product `coverage` forms).
// One CUDA block per chunk c: the cells [first, min(first + span, cells))
// of block b = chunk_block[c] (first = chunk_first[c]); geo[5*b..]: first
// column entry, columns, first row entry, rows, centre cell. out[5*c..]:
// min, max, Σ w·T, Σ w (fixed tree over the threads; min and max skip NaN
// as the host's f64::min / max), T at the centre cell. No atomics.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
stats_blocks_f64(const double* __restrict__ sum, double cells, long long nx,
                 const unsigned char* __restrict__ absent_planes, long long aoff,
                 const long long* __restrict__ chunk_block,
                 const long long* __restrict__ chunk_first,
                 const long long* __restrict__ geo,
                 const long long* __restrict__ cols, const double* __restrict__ ox,
                 const long long* __restrict__ rows, const double* __restrict__ oy,
                 long long span, double* __restrict__ out)
{
    const long long c = blockIdx.x;
    const long long* g = geo + 5 * chunk_block[c];
    const long long c0 = g[0], nc = g[1], r0 = g[2], nr = g[3], ctr = g[4];
    const long long p0 = chunk_first[c];
    const long long p1 = min(p0 + span, nc * nr);
    double mn = STATS_INF, mx = -STATS_INF, s = 0.0, a = 0.0;
    for (long long p = p0 + threadIdx.x; p < p1; p += CUTH_BLOCK) {
        const long long r = r0 + p / nc, k = c0 + p % nc;
        const long long j = cols[k] + nx * rows[r];
        const double t = (aoff >= 0 && absent_planes[aoff + j] != 0)
                             ? __longlong_as_double(0x7ff8000000000000LL)
                             : __ddiv_rn(sum[j], cells);
        const double w = __dmul_rn(ox[k], oy[r]);
        mn = fmin(mn, t);
        mx = fmax(mx, t);
        s = __dadd_rn(s, __dmul_rn(w, t));
        a = __dadd_rn(a, w);
    }
    // Fixed tree over the block's threads (shared memory, halving).
    __shared__ double v[4][CUTH_BLOCK];
    v[0][threadIdx.x] = mn;
    v[1][threadIdx.x] = mx;
    v[2][threadIdx.x] = s;
    v[3][threadIdx.x] = a;
    __syncthreads();
    for (int h = CUTH_BLOCK / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) {
            const int o = threadIdx.x + h;
            v[0][threadIdx.x] = fmin(v[0][threadIdx.x], v[0][o]);
            v[1][threadIdx.x] = fmax(v[1][threadIdx.x], v[1][o]);
            v[2][threadIdx.x] = __dadd_rn(v[2][threadIdx.x], v[2][o]);
            v[3][threadIdx.x] = __dadd_rn(v[3][threadIdx.x], v[3][o]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        double* o = out + 5 * c;
        o[0] = v[0][0];
        o[1] = v[1][0];
        o[2] = v[2][0];
        o[3] = v[3][0];
        o[4] = (aoff >= 0 && absent_planes[aoff + ctr] != 0)
                   ? __longlong_as_double(0x7ff8000000000000LL)
                   : __ddiv_rn(sum[ctr], cells);
    }
}
