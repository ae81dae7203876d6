// Shared by every kernel family: src/backend/cuda/kernels.rs prepends this
// file to quad_diag.cu, blas1.cu and chebyshev.cu (it is not a family of its
// own). It holds the block size, the 64-bit grid-stride row loop, the
// Quad-Diag row formula, and the deterministic on-device reduction used by
// the kernels that produce a dot product.
//
// Stage 1: each thread accumulates its rows (grid-stride, fixed order), the
// block sums its threads with a fixed shuffle tree and writes one partial.
// Stage 2: the last block to finish (threadfence + atomic ticket) sums the
// partials in a fixed order and writes s[out], then resets the ticket for the
// next launch. The grid size is a function of n and the device only, so the
// result is bitwise reproducible run to run, and the scalar never leaves the
// GPU: the next kernel reads s[out] directly.
//
// Contract with the host: blockDim.x == CUTH_BLOCK; `partials` holds at least
// gridDim.x doubles; `ticket` is zero before the first launch.

#define CUTH_BLOCK 256

// Sum over a warp with a fixed butterfly order; valid in lane 0.
__device__ __forceinline__ double cuth_warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, o);
    }
    return v;
}

// Sum over the block; the result is valid in thread 0. Callable several
// times per kernel (the leading barrier protects the shared array).
__device__ __forceinline__ double cuth_block_sum(double v)
{
    __shared__ double warp_part[CUTH_BLOCK / 32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    v = cuth_warp_sum(v);
    __syncthreads();
    if (lane == 0) {
        warp_part[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = (lane < CUTH_BLOCK / 32) ? warp_part[lane] : 0.0;
        v = cuth_warp_sum(v);
    }
    return v;
}

// Stage 2 of the reduction: every thread of every block calls this once with
// its own partial sum; s[out] receives the grid's total.
__device__ __forceinline__ void cuth_reduce_finish(double v,
                                                   double* __restrict__ partials,
                                                   unsigned int* __restrict__ ticket,
                                                   double* __restrict__ s,
                                                   int out)
{
    __shared__ bool am_last;
    v = cuth_block_sum(v);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        // Publish the partial device-wide before taking a ticket.
        __threadfence();
        const unsigned int t = atomicAdd(ticket, 1u);
        am_last = (t == gridDim.x - 1);
    }
    __syncthreads();
    if (!am_last) {
        return;
    }
    __threadfence();
    double acc = 0.0;
    // __ldcg: read through L2, where the other blocks' partials are coherent.
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += CUTH_BLOCK) {
        acc += __ldcg(partials + b);
    }
    acc = cuth_block_sum(acc);
    if (threadIdx.x == 0) {
        s[out] = acc;
        *ticket = 0u;
    }
}

// First row of this thread and the grid-stride step, in 64-bit: n reaches
// ~1.7e8 rows (4096^2 x 10), and i + stride or i + nx*ny must never wrap.
#define CUTH_ROW0 ((long long)blockIdx.x * CUTH_BLOCK + threadIdx.x)
#define CUTH_STRIDE ((long long)gridDim.x * CUTH_BLOCK)

// ---------------------------------------------------------------- Quad-Diag
// A[i,i] = diag[i], A[i,i+1] = -gx[i], A[i,i+nx] = -gy[i], A[i,i+nx*ny] =
// -gz[i], symmetric; sy = nx and sz = nx*ny are the row strides. A neighbour
// exists iff its flat index is inside [0, n): gx is 0 at x = nx-1 (likewise
// gy, gz), so these guards are the only masking, as in QuadDiag::row_apply.
// The terms are subtracted in row_apply's order. Every load is made
// unconditional (at a clamped, valid index) and the guard only selects, so
// that all loads of a row can be in flight at once.

// Diagonal and in-plane terms of (A x)[i]; x_i = x[i].
__device__ __forceinline__ double qd_inplane(const double* __restrict__ diag,
                                             const double* __restrict__ gx,
                                             const double* __restrict__ gy,
                                             const double* __restrict__ x,
                                             double x_i, long long i,
                                             long long n, long long sy)
{
    const long long last = n - 1;
    const long long ie = (i + 1 <= last) ? i + 1 : i;
    const long long iw = (i >= 1) ? i - 1 : i;
    const long long in = (i + sy <= last) ? i + sy : i;
    const long long is = (i >= sy) ? i - sy : i;
    const double e = __ldg(gx + i) * __ldg(x + ie);
    const double w = __ldg(gx + iw) * __ldg(x + iw);
    const double no = __ldg(gy + i) * __ldg(x + in);
    const double so = __ldg(gy + is) * __ldg(x + is);
    double y = __ldg(diag + i) * x_i;
    if (i + 1 < n) y -= e;
    if (i >= 1) y -= w;
    if (i + sy < n) y -= no;
    if (i >= sy) y -= so;
    return y;
}

// Calls f(i, (A x)[i], x[i]) once for every row i, in one of two schedules
// chosen by the host (`columns`, uniform over the grid):
//
// rows (columns = 0): one thread per row, grid-stride. x[i+-sz] and gz[i-sz]
//   are re-read from cache; once a z plane (nx*ny*8 B) no longer stays in L2
//   between its three uses, x is read from DRAM three times and gz twice:
//   72 B/row instead of 48 for SpMV.
// columns (columns = 1): one thread per (x, y) column, grid-stride over
//   columns, walking z upwards with x[i-sz], x[i] and gz[i-sz] carried in
//   registers, so every array is read from DRAM once (48 B/row). It needs
//   nx*ny threads to fill the GPU, hence the host uses it for large planes.
template <class F>
__device__ __forceinline__ void qd_for_each_row(const double* __restrict__ diag,
                                                const double* __restrict__ gx,
                                                const double* __restrict__ gy,
                                                const double* __restrict__ gz,
                                                const double* __restrict__ x,
                                                long long n, long long sy,
                                                long long sz, int columns, F f)
{
    if (!columns) {
        for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
            const long long last = n - 1;
            const long long iu = (i + sz <= last) ? i + sz : i;
            const long long id = (i >= sz) ? i - sz : i;
            const double x_i = __ldg(x + i);
            const double up = __ldg(gz + i) * __ldg(x + iu);
            const double dn = __ldg(gz + id) * __ldg(x + id);
            double y = qd_inplane(diag, gx, gy, x, x_i, i, n, sy);
            if (i + sz < n) y -= up;
            if (i >= sz) y -= dn;
            f(i, y, x_i);
        }
        return;
    }
    const long long nz = n / sz;
    for (long long c = CUTH_ROW0; c < sz; c += CUTH_STRIDE) {
        double x_dn = 0.0;  // x[i - sz]
        double gz_dn = 0.0; // gz[i - sz]
        double x_i = __ldg(x + c);
        for (long long z = 0; z < nz; ++z) {
            const long long i = c + z * sz;
            const bool has_up = z + 1 < nz;
            const double x_up = __ldg(x + (has_up ? i + sz : i));
            const double gz_i = __ldg(gz + i);
            double y = qd_inplane(diag, gx, gy, x, x_i, i, n, sy);
            if (has_up) y -= gz_i * x_up;
            if (z > 0) y -= gz_dn * x_dn;
            f(i, y, x_i);
            x_dn = x_i;
            x_i = x_up;
            gz_dn = gz_i;
        }
    }
}
