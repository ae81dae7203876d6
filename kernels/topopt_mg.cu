// Topopt multigrid family: the trilinear transfers of src/topopt/mg
// (transfer.rs holds the host reference and the rules). One thread per node;
// f64. Node dims (fine fx, fy, fz; coarse cx, cy, cz), per-direction factors
// r0, r1, r2 in {1, 2}; fixed masks as bytes (1 = fixed) per DOF.

// Coarse neighbours of fine node index i along a direction (factor r).
__device__ __forceinline__ int tmg_up(int i, int r, int* c, double* w)
{
    if (r == 1 || (i & 1) == 0) {
        c[0] = i / r; w[0] = 1.0;
        return 1;
    }
    c[0] = (i - 1) / 2; c[1] = (i + 1) / 2; w[0] = 0.5; w[1] = 0.5;
    return 2;
}

// Fine nodes in the support of coarse node index c (factor r, nf fine
// elements along the direction; nf odd: the last coarse node lies beyond
// the fine mesh, padded, and has only fine node nf at weight 1/2).
__device__ __forceinline__ int tmg_down(int c, int r, int nf, int* f, double* w)
{
    if (r == 1) {
        f[0] = c; w[0] = 1.0;
        return 1;
    }
    int n = 0;
    if (2 * c <= nf) { f[n] = 2 * c; w[n++] = 1.0; }
    if (c >= 1) { f[n] = 2 * c - 1; w[n++] = 0.5; }
    if (2 * c < nf) { f[n] = 2 * c + 1; w[n++] = 0.5; }
    return n;
}

// xf += P xc (fixed fine DOFs untouched, fixed coarse DOFs read as 0).
extern "C" __global__ void topmg_prolong_add(const double* __restrict__ xc,
                                             double* __restrict__ xf,
                                             const unsigned char* __restrict__ ffix,
                                             const unsigned char* __restrict__ cfix,
                                             int fx, int fy, int fz, int cx, int cy, int cz,
                                             int r0, int r1, int r2)
{
    long long n = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long nodes = (long long)fx * fy * fz;
    if (n >= nodes) return;
    int i = (int)(n % fx), j = (int)((n / fx) % fy), k = (int)(n / ((long long)fx * fy));
    int ci[2], cj[2], ck[2];
    double wi[2], wj[2], wk[2];
    int ni = tmg_up(i, r0, ci, wi), nj = tmg_up(j, r1, cj, wj), nk = tmg_up(k, r2, ck, wk);
    for (int c = 0; c < 3; ++c) {
        long long d = 3 * n + c;
        if (ffix[d]) continue;
        double v = 0.0;
        for (int a = 0; a < ni; ++a)
            for (int b = 0; b < nj; ++b)
                for (int g = 0; g < nk; ++g) {
                    long long cn = ci[a] + (long long)cx * (cj[b] + (long long)cy * ck[g]);
                    long long cd = 3 * cn + c;
                    if (!cfix[cd]) v += wi[a] * wj[b] * wk[g] * xc[cd];
                }
        xf[d] += v;
    }
}

// rc = P^T rf.
extern "C" __global__ void topmg_restrict(const double* __restrict__ rf,
                                          double* __restrict__ rc,
                                          const unsigned char* __restrict__ ffix,
                                          const unsigned char* __restrict__ cfix,
                                          int fx, int fy, int fz, int cx, int cy, int cz,
                                          int r0, int r1, int r2)
{
    long long n = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long nodes = (long long)cx * cy * cz;
    if (n >= nodes) return;
    int i = (int)(n % cx), j = (int)((n / cx) % cy), k = (int)(n / ((long long)cx * cy));
    int fi[3], fj[3], fk[3];
    double wi[3], wj[3], wk[3];
    int ni = tmg_down(i, r0, fx - 1, fi, wi);
    int nj = tmg_down(j, r1, fy - 1, fj, wj);
    int nk = tmg_down(k, r2, fz - 1, fk, wk);
    for (int c = 0; c < 3; ++c) {
        long long d = 3 * n + c;
        double v = 0.0;
        if (!cfix[d]) {
            for (int a = 0; a < ni; ++a)
                for (int b = 0; b < nj; ++b)
                    for (int g = 0; g < nk; ++g) {
                        long long fn = fi[a] + (long long)fx * (fj[b] + (long long)fy * fk[g]);
                        long long fd = 3 * fn + c;
                        if (!ffix[fd]) v += wi[a] * wj[b] * wk[g] * rf[fd];
                    }
        }
        rc[d] = v;
    }
}

// Coarse moduli: each coarse element the mean of its r0*r1*r2 children
// (summed dz, dy, dx ascending, as transfer.rs), in f64 and f32. Element dims
// fine (ex, ey, ez), coarse (cx, cy, cz); one thread per coarse element.
extern "C" __global__ void topmg_coarse_moduli(const double* __restrict__ ef,
                                               double* __restrict__ ec,
                                               float* __restrict__ ec32,
                                               int ex, int ey, int ez, int cx, int cy, int cz,
                                               int r0, int r1, int r2)
{
    long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long nc = (long long)cx * cy * cz;
    if (c >= nc) return;
    int x = (int)(c % cx), y = (int)((c / cx) % cy), z = (int)(c / ((long long)cx * cy));
    double s = 0.0;
    for (int dz = 0; dz < r2; ++dz)
        for (int dy = 0; dy < r1; ++dy)
            for (int dx = 0; dx < r0; ++dx) {
                int fx = r0 * x + dx, fy = r1 * y + dy, fz = r2 * z + dz;
                if (fx < ex && fy < ey && fz < ez)
                    s += ef[fx + (long long)ex * (fy + (long long)ey * fz)];
            }
    double e = s * (1.0 / (double)(r0 * r1 * r2));
    ec[c] = e;
    ec32[c] = (float)e;
}

// y = A x, A dense n x n row-major (the coarsest level's inverse): one warp
// per row, lanes over the columns, then a warp sum.
extern "C" __global__ void topmg_dense_matvec(const double* __restrict__ a,
                                              const double* __restrict__ x,
                                              double* __restrict__ y, int n)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long row = t / 32;
    int lane = (int)(t & 31);
    if (row >= n) return;
    double s = 0.0;
    for (int j = lane; j < n; j += 32) s += a[row * n + j] * x[j];
    s = cuth_warp_sum(s);
    if (lane == 0) y[row] = s;
}
