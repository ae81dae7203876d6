// Mixed family: the Chebyshev preconditioner in low precision (issue #6; see
// src/linalg/precision.rs for the storage rule, src/linalg/precond/
// chebyshev.rs for the recurrence). It runs on the Jacobi-scaled matrix
// A^ = S A S (S = D^-1/2, unit diagonal, not stored) in f32 arithmetic, with
// f32 work vectors and each off-diagonal array stored as f16 (times a power
// of two) or f32, chosen per array by the host: `lp_g` carries the pointer,
// the format and the scale, uniform over the grid, so the branch costs no
// divergence. The outer PCG stays f64: r comes in and z goes out in f64,
// z = S q(A^) S r. Needs common.cu (prepended).

// One stored off-diagonal array: value(i) = stored(i) * scale.
struct lp_g {
    const void* p;
    int half;
    float scale;
};

__device__ __forceinline__ float lp_load(const lp_g g, long long i)
{
    if (g.half) {
        const unsigned short h = __ldg((const unsigned short*)g.p + i);
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
        return f * g.scale;
    }
    return __ldg((const float*)g.p + i);
}

// (A^ x)[i] without the unit diagonal term's neighbours in z: x_i + in-plane.
// Same clamped-index, select-by-guard pattern and term order as qd_inplane.
__device__ __forceinline__ float lp_inplane(const lp_g gx, const lp_g gy,
                                            const float* __restrict__ x,
                                            float x_i, long long i, long long n,
                                            long long sy)
{
    const long long last = n - 1;
    const long long ie = (i + 1 <= last) ? i + 1 : i;
    const long long iw = (i >= 1) ? i - 1 : i;
    const long long in = (i + sy <= last) ? i + sy : i;
    const long long is = (i >= sy) ? i - sy : i;
    const float e = lp_load(gx, i) * __ldg(x + ie);
    const float w = lp_load(gx, iw) * __ldg(x + iw);
    const float no = lp_load(gy, i) * __ldg(x + in);
    const float so = lp_load(gy, is) * __ldg(x + is);
    float y = x_i;
    if (i + 1 < n) y -= e;
    if (i >= 1) y -= w;
    if (i + sy < n) y -= no;
    if (i >= sy) y -= so;
    return y;
}

// Calls f(i, (A^ x)[i], x[i]) for every row, in the rows or columns schedule
// of qd_for_each_row (common.cu), which the host picks the same way.
template <class F>
__device__ __forceinline__ void lp_for_each_row(const lp_g gx, const lp_g gy,
                                                const lp_g gz,
                                                const float* __restrict__ x,
                                                long long n, long long sy,
                                                long long sz, int columns, F f)
{
    if (!columns) {
        for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
            const long long last = n - 1;
            const long long iu = (i + sz <= last) ? i + sz : i;
            const long long id = (i >= sz) ? i - sz : i;
            const float x_i = __ldg(x + i);
            const float up = lp_load(gz, i) * __ldg(x + iu);
            const float dn = lp_load(gz, id) * __ldg(x + id);
            float y = lp_inplane(gx, gy, x, x_i, i, n, sy);
            if (i + sz < n) y -= up;
            if (i >= sz) y -= dn;
            f(i, y, x_i);
        }
        return;
    }
    const long long nz = n / sz;
    for (long long c = CUTH_ROW0; c < sz; c += CUTH_STRIDE) {
        float x_dn = 0.0f;
        float gz_dn = 0.0f;
        float x_i = __ldg(x + c);
        for (long long z = 0; z < nz; ++z) {
            const long long i = c + z * sz;
            const bool has_up = z + 1 < nz;
            const float x_up = __ldg(x + (has_up ? i + sz : i));
            const float gz_i = lp_load(gz, i);
            float y = lp_inplane(gx, gy, x, x_i, i, n, sy);
            if (has_up) y -= gz_i * x_up;
            if (z > 0) y -= gz_dn * x_dn;
            f(i, y, x_i);
            x_dn = x_i;
            x_i = x_up;
            gz_dn = gz_i;
        }
    }
}

// First step: rh = s r;  res = rh;  d = c rh;  zhat = d;  or, when `last`
// (degree 1), only z = s d in f64.
// Bytes per row: r (f64), s read + res, d, zhat written = 24 B (last: 20 B).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mixed_cheb_init_f32(const float* __restrict__ s, float c,
                    const double* __restrict__ r, float* __restrict__ res,
                    float* __restrict__ d, float* __restrict__ zhat,
                    double* __restrict__ z, long long n, int last)
{
    for (long long i = CUTH_ROW0; i < n; i += CUTH_STRIDE) {
        const float si = __ldg(s + i);
        const float rh = si * (float)__ldg(r + i);
        const float di = c * rh;
        if (last) {
            z[i] = (double)(si * di);
        } else {
            res[i] = rh;
            d[i] = di;
            zhat[i] = di;
        }
    }
}

// Later steps: res -= A^ d;  d_next = alpha d + beta res;  zhat += d_next;
// or, on the last step, only z = s (zhat + d_next) in f64.
// Bytes per row with f16 storage: 3 x 2 matrix + d read, res and zhat read +
// written, d_next written = 30 B (f32 storage: 36 B); last step: matrix, d,
// res, zhat, s read + z (f64) written = 30 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
mixed_cheb_step_f32(const void* gx_p, int gx_half, float gx_scale,
                    const void* gy_p, int gy_half, float gy_scale,
                    const void* gz_p, int gz_half, float gz_scale,
                    float alpha, float beta, const float* __restrict__ d,
                    float* __restrict__ d_next, float* __restrict__ res,
                    float* __restrict__ zhat, const float* __restrict__ s,
                    double* __restrict__ z, long long n, long long sy,
                    long long sz, int columns, int last)
{
    const lp_g gx = {gx_p, gx_half, gx_scale};
    const lp_g gy = {gy_p, gy_half, gy_scale};
    const lp_g gz = {gz_p, gz_half, gz_scale};
    lp_for_each_row(gx, gy, gz, d, n, sy, sz, columns,
                    [&](long long i, float ad, float d_i) {
                        const float ri = res[i] - ad;
                        const float dn = alpha * d_i + beta * ri;
                        if (last) {
                            z[i] = (double)(__ldg(s + i) * (zhat[i] + dn));
                        } else {
                            res[i] = ri;
                            d_next[i] = dn;
                            zhat[i] += dn;
                        }
                    });
}
