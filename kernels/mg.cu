// Multigrid family: the operations of the geometric multigrid cycle
// (src/linalg/mg/cycle.rs) beyond the Quad-Diag kernels: the zebra z-column
// smoother, the fused residual-restriction, the prolongation and the dense
// coarsest solve. Needs common.cu (prepended). Each body is a template over
// the level's element type: f64, and f32 for a low-precision hierarchy
// (linalg::mg::MgPrecision), instantiated below as *_f64 and *_f32; the
// f32 residual-restriction reads the diagonal's excess s = d - sum g
// (mg_low_matrix_f32) instead of d.
//
// Grids: level sizes nx, ny, nz; cell i = x + nx*(y + ny*z); a coarse cell is
// a block of fine columns given per axis by `maps` (linalg::mg::Coarsening):
//   maps[0 .. nxc]                  first fine column of each coarse column, nx
//   maps[nxc+1 .. nxc+nyc+1]        first fine row of each coarse row, ny
//   maps[nxc+nyc+2 ..] (nx, ny)     coarse column of each fine column, then row

// b_i plus the in-plane couplings to the (held) neighbours of cell i at
// (x, y); none when `zero` == 2 (x taken as 0). Neighbours are of the other
// colour, which the current launch never writes.
template <typename T>
__device__ __forceinline__ T mg_rhs(const T* __restrict__ gx, const T* __restrict__ gy,
                                    const T* __restrict__ b, const T* x, long long i,
                                    long long xx, long long y, long long nx, long long ny,
                                    int zero)
{
    T r = __ldg(b + i);
    if (zero != 2) {
        if (xx + 1 < nx) r += __ldg(gx + i) * x[i + 1];
        if (xx > 0) r += __ldg(gx + i - 1) * x[i - 1];
        if (y + 1 < ny) r += __ldg(gy + i) * x[i + nx];
        if (y > 0) r += __ldg(gy + i - nx) * x[i - nx];
    }
    return r;
}

// Whether coarse column (or row) k of an axis of n aggregated as `s` (first
// fine column of each aggregate, then the fine size) is relaxed when the
// smoother skips unchanged cells: its aggregate or a neighbouring one is a
// pair (linalg::mg::relaxed).
__device__ __forceinline__ bool mg_pair(const long long* __restrict__ s, long long k)
{
    return __ldg(s + k + 1) - __ldg(s + k) >= 2;
}

__device__ __forceinline__ bool mg_relaxed(const long long* __restrict__ s,
                                           long long k, long long n)
{
    return mg_pair(s, k) || (k > 0 && mg_pair(s, k - 1)) ||
           (k + 1 < n && mg_pair(s, k + 1));
}

// One colour of the zebra smoother: for every column (x, y) with
// (x + y) % 2 == colour, one thread (consecutive threads take consecutive
// columns of a row, so loads coalesce across x) solves the column's rows of
// A x = b with the in-plane neighbours held, by Thomas with the precomputed
// inverse pivots ip: forward y_k = (r_k + gz_{k-1} y_{k-1}) ip_k, backward
// x_k = y_k + gz_k ip_k x_{k+1}.
// zero: 0 = x holds the iterate, 1 = this colour's cells are 0, 2 = all 0.
// made: null (every column), or the maps of the step that made this level
// (its aggregate starts in x, then in y): only the columns whose x or y is
// mg_relaxed are solved; the others keep x, and with zero == 2 are set to 0
// (the thread of a column pair {2k, 2k + 1} of a row zeroes both: this
// launch reads no in-plane neighbour).
// The body is a device function so that the batched family (batch.cu, which
// is compiled with this file prepended) runs the same code per vector.
// One colour of the zebra smoother on a level of short columns (nz at
// most 32), one warp per column: lane k forms cell k's right-hand side and
// reads its gz and pivot, then every lane runs the column's two Thomas
// passes on values shuffled from the lanes, and lane k keeps step k's. The
// one-thread-per-column form runs each column as one thread's serial
// chain of loads, index arithmetic and arithmetic, 11-16 us a launch on
// every small level (BENCHMARKS.md); here the chain is the passes'
// multiply-adds and shuffles alone.
// Same operations in the same order as mg_smooth_body, so the same bits.
// `made`, `colour`, `zero` as there; launched with 32 threads per column.
template <typename T>
__device__ __forceinline__ void
mg_smooth_warp_body(const T* __restrict__ gx, const T* __restrict__ gy,
                    const T* __restrict__ gz, const T* __restrict__ ip,
                    const T* __restrict__ b, T* x, long long nx, long long ny,
                    long long nz, int colour, int zero, const long long* __restrict__ made)
{
    const unsigned all = 0xffffffffu;
    const int k = threadIdx.x & 31;
    const long long hx = (nx + 1) / 2;
    const long long plane = nx * ny;
    const long long warps = (long long)gridDim.x * (CUTH_BLOCK / 32);
    for (long long t = CUTH_ROW0 / 32; t < hx * ny; t += warps) {
        const long long y = t / hx;
        const long long pair = 2 * (t - y * hx);
        const long long xx = pair + ((colour + y) & 1);
        const bool row = made == nullptr || mg_relaxed(made + nx + 1, y, ny);
        if (!row && zero == 2 && k < nz) {
            for (long long xo = pair; xo < pair + 2 && xo < nx; ++xo) {
                if (!mg_relaxed(made, xo, nx)) x[xo + nx * y + k * plane] = T(0);
            }
        }
        if (xx >= nx || (!row && !mg_relaxed(made, xx, nx))) {
            continue;
        }
        const bool in = k < nz;
        const long long i = xx + nx * y + (in ? k : nz - 1) * plane;
        const T v = mg_rhs(gx, gy, b, x, i, xx, y, nx, ny, zero);
        const T g = __ldg(gz + i);
        const T p = __ldg(ip + i);
        T prev = T(0), mine = T(0);
        for (int s = 0; s < nz; ++s) {
            T r = __shfl_sync(all, v, s);
            const T gs = __shfl_sync(all, g, s > 0 ? s - 1 : 0);
            const T ps = __shfl_sync(all, p, s);
            if (s > 0) r += gs * prev;
            prev = r * ps;
            if (s == k) mine = prev;
        }
        for (int s = (int)nz - 2; s >= 0; --s) {
            const T ys = __shfl_sync(all, mine, s);
            const T gs = __shfl_sync(all, g, s);
            const T ps = __shfl_sync(all, p, s);
            prev = ys + gs * ps * prev;
            if (s == k) mine = prev;
        }
        if (in) x[i] = mine;
    }
}

template <typename T>
__device__ __forceinline__ void
mg_smooth_body(const T* __restrict__ gx, const T* __restrict__ gy,
               const T* __restrict__ gz, const T* __restrict__ ip,
               const T* __restrict__ b, T* x, long long nx, long long ny,
               long long nz, int colour, int zero, const long long* __restrict__ made)
{
    const long long hx = (nx + 1) / 2;
    const long long plane = nx * ny;
    for (long long t = CUTH_ROW0; t < hx * ny; t += CUTH_STRIDE) {
        const long long y = t / hx;
        const long long pair = 2 * (t - y * hx);
        const long long xx = pair + ((colour + y) & 1);
        const bool row = made == nullptr || mg_relaxed(made + nx + 1, y, ny);
        if (!row && zero == 2) {
            for (long long xo = pair; xo < pair + 2 && xo < nx; ++xo) {
                if (!mg_relaxed(made, xo, nx)) {
                    for (long long k = 0; k < nz; ++k) x[xo + nx * y + k * plane] = T(0);
                }
            }
        }
        if (xx >= nx || (!row && !mg_relaxed(made, xx, nx))) {
            continue;
        }
        const long long j = xx + nx * y;
        T prev = T(0);
        for (long long k = 0; k < nz; ++k) {
            const long long i = j + k * plane;
            T r = mg_rhs(gx, gy, b, x, i, xx, y, nx, ny, zero);
            if (k > 0) r += __ldg(gz + i - plane) * prev;
            prev = r * __ldg(ip + i);
            x[i] = prev;
        }
        for (long long k = nz - 2; k >= 0; --k) {
            const long long i = j + k * plane;
            prev = x[i] + __ldg(gz + i) * __ldg(ip + i) * prev;
            x[i] = prev;
        }
    }
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mg_smooth_f64(const double* __restrict__ gx, const double* __restrict__ gy,
              const double* __restrict__ gz, const double* __restrict__ ip,
              const double* __restrict__ b, double* x, long long nx, long long ny,
              long long nz, int colour, int zero, const long long* __restrict__ made)
{
    mg_smooth_body(gx, gy, gz, ip, b, x, nx, ny, nz, colour, zero, made);
}

// mg_smooth_f64 one warp per column (mg_smooth_warp_body).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mg_smooth_warp_f64(const double* __restrict__ gx, const double* __restrict__ gy,
                    const double* __restrict__ gz, const double* __restrict__ ip,
                    const double* __restrict__ b, double* x, long long nx, long long ny,
                    long long nz, int colour, int zero, const long long* __restrict__ made)
{
    mg_smooth_warp_body(gx, gy, gz, ip, b, x, nx, ny, nz, colour, zero, made);
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mg_smooth_warp_f32(const float* __restrict__ gx, const float* __restrict__ gy,
                    const float* __restrict__ gz, const float* __restrict__ ip,
                    const float* __restrict__ b, float* x, long long nx, long long ny,
                    long long nz, int colour, int zero, const long long* __restrict__ made)
{
    mg_smooth_warp_body(gx, gy, gz, ip, b, x, nx, ny, nz, colour, zero, made);
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mg_smooth_f32(const float* __restrict__ gx, const float* __restrict__ gy,
              const float* __restrict__ gz, const float* __restrict__ ip,
              const float* __restrict__ b, float* x, long long nx, long long ny,
              long long nz, int colour, int zero, const long long* __restrict__ made)
{
    mg_smooth_body(gx, gy, gz, ip, b, x, nx, ny, nz, colour, zero, made);
}

// bc = P^T (b - A x): one thread per coarse cell sums the residual of its
// children (A x in row_apply's diagonal form).
__device__ __forceinline__ void
mg_restrict_body(const double* __restrict__ diag, const double* __restrict__ gx,
                 const double* __restrict__ gy, const double* __restrict__ gz,
                 const double* __restrict__ b, const double* __restrict__ x,
                 double* __restrict__ bc, long long nx, long long ny, long long nz,
                 long long nxc, long long nyc, const long long* __restrict__ maps)
{
    const long long* xs = maps;
    const long long* ys = maps + nxc + 1;
    const long long plane = nx * ny;
    const long long n = plane * nz;
    const long long cplane = nxc * nyc;
    for (long long ic = CUTH_ROW0; ic < cplane * nz; ic += CUTH_STRIDE) {
        const long long xc = ic % nxc;
        const long long yc = (ic % cplane) / nxc;
        const long long z = ic / cplane;
        const long long x0 = __ldg(xs + xc), x1 = __ldg(xs + xc + 1);
        const long long y1 = __ldg(ys + yc + 1);
        double s = 0.0;
        for (long long y = __ldg(ys + yc); y < y1; ++y) {
            for (long long xx = x0; xx < x1; ++xx) {
                const long long i = xx + nx * y + plane * z;
                double ax = qd_inplane(diag, gx, gy, x, __ldg(x + i), i, n, nx);
                if (i + plane < n) ax -= __ldg(gz + i) * __ldg(x + i + plane);
                if (i >= plane) ax -= __ldg(gz + i - plane) * __ldg(x + i - plane);
                s += __ldg(b + i) - ax;
            }
        }
        bc[ic] = s;
    }
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mg_restrict_f64(const double* __restrict__ diag, const double* __restrict__ gx,
                const double* __restrict__ gy, const double* __restrict__ gz,
                const double* __restrict__ b, const double* __restrict__ x,
                double* __restrict__ bc, long long nx, long long ny, long long nz,
                long long nxc, long long nyc, const long long* __restrict__ maps)
{
    mg_restrict_body(diag, gx, gy, gz, b, x, bc, nx, ny, nz, nxc, nyc, maps);
}

// Row i of A x in the excess form of an f32 level: s_i x_i + sum g (x_i - x_j)
// over the neighbours j inside the grid (no cancellation against d).
__device__ __forceinline__ float mg_low_ax(const float* __restrict__ s,
                                           const float* __restrict__ gx,
                                           const float* __restrict__ gy,
                                           const float* __restrict__ gz,
                                           const float* __restrict__ x, long long i,
                                           long long xx, long long y, long long z,
                                           long long nx, long long ny, long long nz)
{
    const long long plane = nx * ny;
    const float xi = __ldg(x + i);
    float ax = __ldg(s + i) * xi;
    if (xx + 1 < nx) ax += __ldg(gx + i) * (xi - __ldg(x + i + 1));
    if (xx > 0) ax += __ldg(gx + i - 1) * (xi - __ldg(x + i - 1));
    if (y + 1 < ny) ax += __ldg(gy + i) * (xi - __ldg(x + i + nx));
    if (y > 0) ax += __ldg(gy + i - nx) * (xi - __ldg(x + i - nx));
    if (z + 1 < nz) ax += __ldg(gz + i) * (xi - __ldg(x + i + plane));
    if (z > 0) ax += __ldg(gz + i - plane) * (xi - __ldg(x + i - plane));
    return ax;
}

// bc = P^T (b - A x) on an f32 level (mg_restrict_body's loop, mg_low_ax's
// rows).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mg_restrict_f32(const float* __restrict__ s, const float* __restrict__ gx,
                const float* __restrict__ gy, const float* __restrict__ gz,
                const float* __restrict__ b, const float* __restrict__ x,
                float* __restrict__ bc, long long nx, long long ny, long long nz,
                long long nxc, long long nyc, const long long* __restrict__ maps)
{
    const long long* xs = maps;
    const long long* ys = maps + nxc + 1;
    const long long plane = nx * ny;
    const long long cplane = nxc * nyc;
    for (long long ic = CUTH_ROW0; ic < cplane * nz; ic += CUTH_STRIDE) {
        const long long xc = ic % nxc;
        const long long yc = (ic % cplane) / nxc;
        const long long z = ic / cplane;
        const long long x0 = __ldg(xs + xc), x1 = __ldg(xs + xc + 1);
        const long long y1 = __ldg(ys + yc + 1);
        float sum = 0.0f;
        for (long long y = __ldg(ys + yc); y < y1; ++y) {
            for (long long xx = x0; xx < x1; ++xx) {
                const long long i = xx + nx * y + plane * z;
                sum += __ldg(b + i) - mg_low_ax(s, gx, gy, gz, x, i, xx, y, z, nx, ny, nz);
            }
        }
        bc[ic] = sum;
    }
}

// An f64 level as an f32 one: s = d - sum g (in f64, then rounded), gx, gy,
// gz rounded.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mg_low_matrix_f32(const double* __restrict__ d, const double* __restrict__ gx,
                  const double* __restrict__ gy, const double* __restrict__ gz,
                  float* __restrict__ s, float* __restrict__ gx32,
                  float* __restrict__ gy32, float* __restrict__ gz32,
                  long long nx, long long ny, long long nz)
{
    const long long plane = nx * ny;
    for (long long i = CUTH_ROW0; i < plane * nz; i += CUTH_STRIDE) {
        const long long xx = i % nx;
        const long long y = (i % plane) / nx;
        const long long z = i / plane;
        double g = 0.0;
        if (xx + 1 < nx) g += __ldg(gx + i);
        if (xx > 0) g += __ldg(gx + i - 1);
        if (y + 1 < ny) g += __ldg(gy + i);
        if (y > 0) g += __ldg(gy + i - nx);
        if (z + 1 < nz) g += __ldg(gz + i);
        if (z > 0) g += __ldg(gz + i - plane);
        s[i] = (float)(__ldg(d + i) - g);
        gx32[i] = (float)__ldg(gx + i);
        gy32[i] = (float)__ldg(gy + i);
        gz32[i] = (float)__ldg(gz + i);
    }
}

// out = v rounded to f32 (the residual entering an f32 cycle, pivots).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mg_to_f32(const double* __restrict__ v, float* __restrict__ out, long long n)
{
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) out[i] = (float)__ldg(v + i);
}

// out = v widened to f64 (the correction leaving an f32 cycle).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mg_to_f64(const float* __restrict__ v, double* __restrict__ out, long long n)
{
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) out[i] = (double)__ldg(v + i);
}

// x += P xc: every fine cell adds its coarse parent.
template <typename T>
__device__ __forceinline__ void
mg_prolong_body(const T* __restrict__ xc, T* __restrict__ x,
                long long nx, long long ny, long long nz, long long nxc,
                long long nyc, const long long* __restrict__ maps)
{
    const long long* xmap = maps + nxc + nyc + 2;
    const long long* ymap = xmap + nx;
    const long long plane = nx * ny;
    for (long long i = CUTH_ROW0; i < plane * nz; i += CUTH_STRIDE) {
        const long long xx = i % nx;
        const long long y = (i % plane) / nx;
        const long long z = i / plane;
        x[i] += __ldg(xc + __ldg(xmap + xx) + nxc * (__ldg(ymap + y) + nyc * z));
    }
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mg_prolong_f64(const double* __restrict__ xc, double* __restrict__ x,
               long long nx, long long ny, long long nz, long long nxc,
               long long nyc, const long long* __restrict__ maps)
{
    mg_prolong_body(xc, x, nx, ny, nz, nxc, nyc, maps);
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mg_prolong_f32(const float* __restrict__ xc, float* __restrict__ x,
               long long nx, long long ny, long long nz, long long nxc,
               long long nyc, const long long* __restrict__ maps)
{
    mg_prolong_body(xc, x, nx, ny, nz, nxc, nyc, maps);
}

__device__ __forceinline__ float cuth_warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, o);
    }
    return v;
}

// x = M b, M dense row-major n x n: one warp per row, fixed-order sum.
template <typename T>
__device__ __forceinline__ void
mg_dense_body(const T* __restrict__ m, const T* __restrict__ b, T* __restrict__ x,
              long long n)
{
    const long long warps = (long long)gridDim.x * (CUTH_BLOCK / 32);
    const int lane = threadIdx.x & 31;
    for (long long row = CUTH_ROW0 / 32; row < n; row += warps) {
        T s = T(0);
        for (long long j = lane; j < n; j += 32) {
            s += __ldg(m + row * n + j) * __ldg(b + j);
        }
        s = cuth_warp_sum(s);
        if (lane == 0) {
            x[row] = s;
        }
    }
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mg_dense_f64(const double* __restrict__ m, const double* __restrict__ b,
             double* __restrict__ x, long long n)
{
    mg_dense_body(m, b, x, n);
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mg_dense_f32(const float* __restrict__ m, const float* __restrict__ b,
             float* __restrict__ x, long long n)
{
    mg_dense_body(m, b, x, n);
}
