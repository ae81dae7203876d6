// Topopt family: the matrix-free elasticity operator K(E) v of `cuth topopt`
// on a structured hex mesh (numbering as src/topopt/mesh.rs: element
// e = ex + nelx*(ey + nely*ez), node n = i + (nelx+1)*(j + (nely+1)*k), DOF
// 3n + c, local node order LOCAL_NODES, local DOF 3a + c). K is never formed:
// every kernel recomputes an element's 8 nodes from its index (no stored
// connectivity) and multiplies by the one unit element matrix Ke (24x24,
// row-major), scaled by the element modulus E[e]. Needs common.cu.
//
// Fixed DOFs (`fixed[d] != 0`) are eliminated symmetrically: a fixed x value
// is read as 0 by every gather, and the fix-up writes (K x)[d] = x[d] there.
//
// Two schedules:
// - fused: one kernel, one thread per element, gather, multiply and atomic
//   scatter in registers, the atomics of a face shared by x-neighbouring
//   lanes merged by a warp shuffle; then the fix-up.
// - node-centred: one thread per node, which reads its 27 neighbours' DOFs
//   and sums the contributions of its (up to) 8 elements itself: no atomics,
//   so bitwise deterministic, and the fix-up and the dot product fused in.
//
// Both take Ke by value as a __grid_constant__ kernel parameter (4.6 KB in
// f64, which needs the large-parameter launches of CUDA >= 12.1). After
// unrolling every Ke index is a compile-time constant, so parameter entries
// become constant-bank operands of the FMAs, where entries in shared memory
// would cost one load instruction each (measured slower on the H200).
//
// Element and node kernels run one thread per element / node, without a
// grid-stride loop: across loop iterations the compiler hoists the (read-only)
// Ke loads and spills them (measured: 5 KB of local memory per thread).
//
// Precisions: T is the arithmetic (Ke, E, element vectors), X the type x is
// read as, A the type of the atomic accumulator. f64 vectors are the
// interface; the f32 fused apply reads an f32 copy of x and accumulates in
// f32, the f32 node-centred one converts on load.

#define TOPO_KE 576

// Ke by value, the kernel parameter of the operator kernels.
struct TopoKe64 {
    double k[TOPO_KE];
};
struct TopoKe32 {
    float k[TOPO_KE];
};

// The 8 global nodes of element e, in LOCAL_NODES order.
__device__ __forceinline__ void topo_nodes(int e, int nelx, int nely, int* n)
{
    const int ex = e % nelx;
    const int t = e / nelx;
    const int ey = t % nely;
    const int ez = t / nely;
    const int sx = nelx + 1;
    const int sp = sx * (nely + 1);
    const int n0 = ex + sx * (ey + (nely + 1) * ez);
    n[0] = n0;
    n[1] = n0 + 1;
    n[2] = n0 + 1 + sx;
    n[3] = n0 + sx;
    n[4] = n0 + sp;
    n[5] = n0 + 1 + sp;
    n[6] = n0 + 1 + sx + sp;
    n[7] = n0 + sx + sp;
}

// Local index of the corner at offsets (cx, cy, cz) in {0,1}: bottom face
// counter-clockwise, then the top face (LOCAL_NODES). Constant-folded when
// the arguments are.
__device__ __forceinline__ int topo_corner(int cx, int cy, int cz)
{
    return 4 * cz + (cy ? (cx ? 2 : 3) : (cx ? 1 : 0));
}

// x[d] as T, or 0 on a fixed DOF (a fixed value never reaches a free row).
template <typename T, typename X>
__device__ __forceinline__ T topo_load(const X* __restrict__ x,
                                       const unsigned char* __restrict__ fixed, int d)
{
    const X v = __ldg(x + d);
    return __ldg(fixed + d) ? T(0) : T(v);
}

// Copies Ke to shared memory (every thread of the block calls it); the
// element energies read it from there.
template <typename T>
__device__ __forceinline__ void topo_load_ke(const T* __restrict__ ke_g, T* ke)
{
    for (int i = threadIdx.x; i < TOPO_KE; i += blockDim.x) {
        ke[i] = ke_g[i];
    }
    __syncthreads();
}

// ------------------------------------------------------------------ fused
// y += E[e] Ke u_e for every element, one thread per element, with half the
// atomics of a plain scatter: lanes hold consecutive elements, so the next
// lane's element is usually the x-neighbour, whose left face (local
// nodes 0, 3, 4, 7) is this element's right face (1, 2, 5, 6; pairs 1->0,
// 2->3, 5->4, 6->7). Each lane passes its right-face results to the
// next lane with a shuffle, which adds them to its own before its atomics;
// the sender then skips those 12 atomics. Whole warps run or return
// (blockDim.x is a multiple of 32) so that every lane joins every shuffle.
template <typename T, typename X, typename A>
__device__ __forceinline__ void topo_fused_merged(const T* __restrict__ ke,
                                                  const T* __restrict__ E,
                                                  const X* __restrict__ x,
                                                  const unsigned char* __restrict__ fixed,
                                                  A* __restrict__ y, int nel, int nelx, int nely)
{
    const int lane = threadIdx.x & 31;
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e - lane < nel) {
        const bool active = e < nel;
        const int ec = active ? e : nel - 1;
        int n[8];
        topo_nodes(ec, nelx, nely, n);
        T u[24];
#pragma unroll
        for (int l = 0; l < 24; ++l) {
            u[l] = topo_load<T>(x, fixed, 3 * n[l / 3] + l % 3);
        }
        const T ee = active ? __ldg(E + ec) : T(0);
        T v[24];
#pragma unroll
        for (int r = 0; r < 24; ++r) {
            T acc = T(0);
#pragma unroll
            for (int c = 0; c < 24; ++c) {
                acc += ke[r * 24 + c] * u[c];
            }
            v[r] = ee * acc;
        }
        const int ex = ec % nelx;
        // The next lane holds e + 1 in the same x row; the previous, e - 1.
        const bool give = active && lane < 31 && ex + 1 < nelx && e + 1 < nel;
        const bool take = active && lane > 0 && ex > 0;
        const int from[4] = {1, 2, 5, 6}, to[4] = {0, 3, 4, 7};
#pragma unroll
        for (int p = 0; p < 4; ++p) {
#pragma unroll
            for (int c = 0; c < 3; ++c) {
                const T got = __shfl_up_sync(0xffffffffu, v[3 * from[p] + c], 1);
                if (take) {
                    v[3 * to[p] + c] += got;
                }
            }
        }
        if (active) {
#pragma unroll
            for (int a = 0; a < 8; ++a) {
                const bool right_face = a == 1 || a == 2 || a == 5 || a == 6;
                if (right_face && give) {
                    continue;
                }
#pragma unroll
                for (int c = 0; c < 3; ++c) {
                    atomicAdd(y + 3 * n[a] + c, A(v[3 * a + c]));
                }
            }
        }
    }
}

// f64 throughout, accumulating into y itself.
extern "C" __global__ void __launch_bounds__(512)
topopt_fusedm_f64(const __grid_constant__ TopoKe64 ke, const double* E, const double* x,
                  const unsigned char* fixed, double* y, int nel, int nelx, int nely)
{
    topo_fused_merged<double, double, double>(ke.k, E, x, fixed, y, nel, nelx, nely);
}

// f32 throughout: x from an f32 copy, f32 atomics into an f32 accumulator.
extern "C" __global__ void __launch_bounds__(512)
topopt_fusedm_f32_a32(const __grid_constant__ TopoKe32 ke, const float* E, const float* x,
                      const unsigned char* fixed, float* y, int nel, int nelx, int nely)
{
    topo_fused_merged<float, float, float>(ke.k, E, x, fixed, y, nel, nelx, nely);
}

// ---------------------------------------------------------------- fix-up
// After an atomic schedule has accumulated K_ff x into `acc` (zeroed before):
// v = x[d] on a fixed DOF, acc[d] elsewhere; then
//   mode 0:  y = v,      s[out] = x . y   (apply_dot)
//   mode 1:  y = b - v,  s[out] = y . y   (true residual)
// acc may alias y (f64 accumulation in place), hence no __restrict__ there.
// Bytes per DOF: acc, x, fixed (, b) read, y written.
template <typename A>
__device__ __forceinline__ void topo_finish(const A* acc, const double* __restrict__ x,
                                            const unsigned char* __restrict__ fixed,
                                            const double* __restrict__ b, double* y,
                                            long long n, int mode,
                                            double* __restrict__ partials,
                                            unsigned int* __restrict__ ticket,
                                            double* __restrict__ s, int out)
{
    double dot = 0.0;
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        const double xi = __ldg(x + i);
        const double v = __ldg(fixed + i) ? xi : (double)acc[i];
        if (mode == 0) {
            y[i] = v;
            dot += xi * v;
        } else {
            const double r = __ldg(b + i) - v;
            y[i] = r;
            dot += r * r;
        }
    }
    cuth_reduce_finish(dot, partials, ticket, s, out);
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
topopt_finish_f64(const double* acc, const double* x, const unsigned char* fixed,
                  const double* b, double* y, long long n, int mode, double* partials,
                  unsigned int* ticket, double* s, int out)
{
    topo_finish<double>(acc, x, fixed, b, y, n, mode, partials, ticket, s, out);
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
topopt_finish_f32(const float* acc, const double* x, const unsigned char* fixed,
                  const double* b, double* y, long long n, int mode, double* partials,
                  unsigned int* ticket, double* s, int out)
{
    topo_finish<float>(acc, x, fixed, b, y, n, mode, partials, ticket, s, out);
}

// x32 = (float) x, the input of topopt_fused_f32_a32.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
topopt_to_f32(const double* __restrict__ x, float* __restrict__ x32, long long n)
{
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        x32[i] = (float)__ldg(x + i);
    }
}

// ----------------------------------------------------------- node-centred
// One thread per node (i, j, k): loads the DOFs of its 27 neighbours once
// (0 outside the mesh or on fixed DOFs), then for each of its up to 8
// elements (element offsets (ox, oy, oz) in {0,1}^3: element
// (i-1+ox, j-1+oy, k-1+oz), where this node is corner (1-ox, 1-oy, 1-oz))
// adds E_e * sum_b Ke[3a+c][3b+d] x_b[d]. Every index is a compile-time
// constant after unrolling, so the 81 neighbour values stay in registers.
// Writes y (or the residual, `mode` as topo_finish) and reduces the dot
// (grid: one thread per node, so `partials` holds ceil(nodes / CUTH_BLOCK)).
template <typename T>
__device__ __forceinline__ void topo_node(const T* __restrict__ ke, const T* __restrict__ E,
                                          const double* __restrict__ x,
                                          const unsigned char* __restrict__ fixed,
                                          const double* __restrict__ b, double* __restrict__ y,
                                          int nelx, int nely, int nelz, int mode,
                                          double* __restrict__ partials,
                                          unsigned int* __restrict__ ticket,
                                          double* __restrict__ s, int out)
{
    const int sx = nelx + 1, sy = nely + 1, sz = nelz + 1;
    const long long nn = (long long)sx * sy * sz;
    double dot = 0.0;
    const long long nd = CUTH_ROW0;
    if (nd < nn) {
        const int node = (int)nd;
        const int i = node % sx;
        const int j = (node / sx) % sy;
        const int k = node / (sx * sy);
        T xm[27][3];
#pragma unroll
        for (int q = 0; q < 27; ++q) {
            const int di = q % 3 - 1, dj = (q / 3) % 3 - 1, dk = q / 9 - 1;
            const bool in = i + di >= 0 && i + di < sx && j + dj >= 0 && j + dj < sy &&
                            k + dk >= 0 && k + dk < sz;
            const int m = in ? node + di + sx * (dj + sy * dk) : node;
#pragma unroll
            for (int c = 0; c < 3; ++c) {
                const T v = topo_load<T>(x, fixed, 3 * m + c);
                xm[q][c] = in ? v : T(0);
            }
        }
        T acc[3] = {T(0), T(0), T(0)};
#pragma unroll
        for (int o = 0; o < 8; ++o) {
            const int ox = o & 1, oy = (o >> 1) & 1, oz = o >> 2;
            const int ex = i - 1 + ox, ey = j - 1 + oy, ez = k - 1 + oz;
            const bool in = ex >= 0 && ex < nelx && ey >= 0 && ey < nely && ez >= 0 && ez < nelz;
            const T ee = in ? __ldg(E + ex + nelx * (ey + nely * ez)) : T(0);
            const int a = topo_corner(1 - ox, 1 - oy, 1 - oz);
            T t[3] = {T(0), T(0), T(0)};
#pragma unroll
            for (int bl = 0; bl < 8; ++bl) {
                const int bx = (bl & 3) == 1 || (bl & 3) == 2;
                const int by = (bl & 3) >= 2;
                const int bz = bl >> 2;
                // Neighbour offset of corner b of this element.
                const int q = (ox - 1 + bx + 1) + 3 * (oy - 1 + by + 1) + 9 * (oz - 1 + bz + 1);
#pragma unroll
                for (int c = 0; c < 3; ++c) {
#pragma unroll
                    for (int d = 0; d < 3; ++d) {
                        t[c] += ke[(3 * a + c) * 24 + 3 * bl + d] * xm[q][d];
                    }
                }
            }
#pragma unroll
            for (int c = 0; c < 3; ++c) {
                acc[c] += ee * t[c];
            }
        }
#pragma unroll
        for (int c = 0; c < 3; ++c) {
            const long long d = 3 * nd + c;
            const double xi = __ldg(x + d);
            const double v = __ldg(fixed + d) ? xi : (double)acc[c];
            if (mode == 0) {
                y[d] = v;
                dot += xi * v;
            } else {
                const double r = __ldg(b + d) - v;
                y[d] = r;
                dot += r * r;
            }
        }
    }
    cuth_reduce_finish(dot, partials, ticket, s, out);
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
topopt_nodep_f64(const __grid_constant__ TopoKe64 ke, const double* E, const double* x,
                 const unsigned char* fixed, const double* b, double* y, int nelx, int nely,
                 int nelz, int mode, double* partials, unsigned int* ticket, double* s, int out)
{
    topo_node<double>(ke.k, E, x, fixed, b, y, nelx, nely, nelz, mode, partials, ticket, s, out);
}

extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
topopt_nodep_f32(const __grid_constant__ TopoKe32 ke, const float* E, const double* x,
                 const unsigned char* fixed, const double* b, double* y, int nelx, int nely,
                 int nelz, int mode, double* partials, unsigned int* ticket, double* s, int out)
{
    topo_node<float>(ke.k, E, x, fixed, b, y, nelx, nely, nelz, mode, partials, ticket, s, out);
}

// ------------------------------------------------------- the other operators

// diag[3n+c] = sum over the node's elements of E_e Ke[3a+c][3a+c]; 1 on a
// fixed DOF. One thread per node, fixed order: deterministic.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
topopt_diag_f64(const double* __restrict__ ke, const double* __restrict__ E,
                const unsigned char* __restrict__ fixed, double* __restrict__ diag, int nelx,
                int nely, int nelz)
{
    const int sx = nelx + 1, sy = nely + 1, sz = nelz + 1;
    const long long nn = (long long)sx * sy * sz;
    for (long long nd = CUTH_ROW0; nd < nn; nd += CUTH_STRIDE) {
        const int node = (int)nd;
        const int i = node % sx;
        const int j = (node / sx) % sy;
        const int k = node / (sx * sy);
        double acc[3] = {0.0, 0.0, 0.0};
#pragma unroll
        for (int o = 0; o < 8; ++o) {
            const int ox = o & 1, oy = (o >> 1) & 1, oz = o >> 2;
            const int ex = i - 1 + ox, ey = j - 1 + oy, ez = k - 1 + oz;
            if (ex < 0 || ex >= nelx || ey < 0 || ey >= nely || ez < 0 || ez >= nelz) {
                continue;
            }
            const double ee = __ldg(E + ex + nelx * (ey + nely * ez));
            const int a = topo_corner(1 - ox, 1 - oy, 1 - oz);
#pragma unroll
            for (int c = 0; c < 3; ++c) {
                acc[c] += ee * __ldg(ke + (3 * a + c) * 25);
            }
        }
#pragma unroll
        for (int c = 0; c < 3; ++c) {
            const long long d = 3 * nd + c;
            diag[d] = __ldg(fixed + d) ? 1.0 : acc[c];
        }
    }
}

// c[e] = u_e^T Ke u_e with the unit modulus (fixed DOFs read as 0, as in the
// operator), one thread per element, f64.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
topopt_energy_f64(const double* __restrict__ ke_g, const double* __restrict__ u,
                  const unsigned char* __restrict__ fixed, double* __restrict__ c, int nel,
                  int nelx, int nely)
{
    __shared__ double ke[TOPO_KE];
    topo_load_ke(ke_g, ke);
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < nel) {
        int n[8];
        topo_nodes(e, nelx, nely, n);
        double ue[24];
#pragma unroll
        for (int l = 0; l < 24; ++l) {
            ue[l] = topo_load<double>(u, fixed, 3 * n[l / 3] + l % 3);
        }
        double energy = 0.0;
#pragma unroll
        for (int r = 0; r < 24; ++r) {
            double acc = 0.0;
#pragma unroll
            for (int col = 0; col < 24; ++col) {
                acc += ke[r * 24 + col] * ue[col];
            }
            energy += ue[r] * acc;
        }
        c[e] = energy;
    }
}
