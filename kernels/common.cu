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

// (A x)[i] for the Quad-Diag matrix A[i,i] = diag[i], A[i,i+1] = -gx[i],
// A[i,i+nx] = -gy[i], A[i,i+nx*ny] = -gz[i] (sy = nx, sz = nx*ny), with the
// same terms in the same order as QuadDiag::row_apply on the CPU. A neighbour exists iff its index is inside [0, n): gx is 0 at
// x = nx-1 (likewise gy, gz), so the flat-index guards are the only masking.
__device__ __forceinline__ double qd_row(const double* __restrict__ diag,
                                         const double* __restrict__ gx,
                                         const double* __restrict__ gy,
                                         const double* __restrict__ gz,
                                         const double* __restrict__ x,
                                         long long i, long long n,
                                         long long sy, long long sz)
{
    double y = __ldg(diag + i) * __ldg(x + i);
    if (i + 1 < n) {
        y -= __ldg(gx + i) * __ldg(x + i + 1);
    }
    if (i >= 1) {
        y -= __ldg(gx + i - 1) * __ldg(x + i - 1);
    }
    if (i + sy < n) {
        y -= __ldg(gy + i) * __ldg(x + i + sy);
    }
    if (i >= sy) {
        y -= __ldg(gy + i - sy) * __ldg(x + i - sy);
    }
    if (i + sz < n) {
        y -= __ldg(gz + i) * __ldg(x + i + sz);
    }
    if (i >= sz) {
        y -= __ldg(gz + i - sz) * __ldg(x + i - sz);
    }
    return y;
}
