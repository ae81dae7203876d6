// Mixed family: the Chebyshev preconditioner in low precision (issue #6; see
// src/linalg/precision.rs for the storage rule, src/linalg/precond/
// chebyshev.rs for the recurrence). It runs on the Jacobi-scaled matrix
// A^ = S A S (S = D^-1/2, unit diagonal, not stored) in f32 arithmetic, with
// f32 work vectors and each off-diagonal array stored as f16 (times a power
// of two) or f32, chosen per array by the host, which launches the step
// kernel instance compiled for that combination. The outer PCG stays f64: r comes in and z goes out in f64,
// z = S q(A^) S r. Needs common.cu (prepended).

// One stored off-diagonal array: value(i) = stored(i) * scale, stored as
// f16 bits (H = 1) or f32 (H = 0). The format is a template parameter, so
// each kernel instance has plain loads and no per-load branch.
template <int H>
struct lp_g {
    const void* p;
    float scale;

    __device__ __forceinline__ float operator()(long long i) const
    {
        if (H) {
            const unsigned short h = __ldg((const unsigned short*)p + i);
            float f;
            asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
            return f * scale;
        }
        return __ldg((const float*)p + i);
    }
};

// (A^ x)[i] without the z terms: the unit diagonal and the in-plane
// neighbours. Same clamped-index, select-by-guard pattern and term order as
// qd_inplane.
template <class GX, class GY>
__device__ __forceinline__ float lp_inplane(const GX gx, const GY gy,
                                            const float* __restrict__ x,
                                            float x_i, long long i, long long n,
                                            long long sy)
{
    const long long last = n - 1;
    const long long ie = (i + 1 <= last) ? i + 1 : i;
    const long long iw = (i >= 1) ? i - 1 : i;
    const long long in = (i + sy <= last) ? i + sy : i;
    const long long is = (i >= sy) ? i - sy : i;
    const float e = gx(i) * __ldg(x + ie);
    const float w = gx(iw) * __ldg(x + iw);
    const float no = gy(i) * __ldg(x + in);
    const float so = gy(is) * __ldg(x + is);
    float y = x_i;
    if (i + 1 < n) y -= e;
    if (i >= 1) y -= w;
    if (i + sy < n) y -= no;
    if (i >= sy) y -= so;
    return y;
}

// Calls f(i, (A^ x)[i], x[i]) for every row, in the rows or columns schedule
// of qd_for_each_row (common.cu), which the host picks the same way.
template <class GX, class GY, class GZ, class F>
__device__ __forceinline__ void lp_for_each_row(const GX gx, const GY gy,
                                                const GZ gz,
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
            const float up = gz(i) * __ldg(x + iu);
            const float dn = gz(id) * __ldg(x + id);
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
            const float gz_i = gz(i);
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
template <int HX, int HY, int HZ>
__device__ __forceinline__ void
mixed_cheb_step(const void* gx_p, float gx_scale, const void* gy_p,
                float gy_scale, const void* gz_p, float gz_scale, float alpha,
                float beta, const float* __restrict__ d,
                float* __restrict__ d_next, float* __restrict__ res,
                float* __restrict__ zhat, const float* __restrict__ s,
                double* __restrict__ z, long long n, long long sy, long long sz,
                int columns, int last)
{
    const lp_g<HX> gx = {gx_p, gx_scale};
    const lp_g<HY> gy = {gy_p, gy_scale};
    const lp_g<HZ> gz = {gz_p, gz_scale};
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

// One extern "C" instance per storage combination of (gx, gy, gz): h = f16,
// s = f32, e.g. mixed_cheb_step_f32_hhs.
#define MIXED_CHEB_STEP(SUFFIX, HX, HY, HZ)                                           \
    extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)                         \
        mixed_cheb_step_f32_##SUFFIX(                                                \
            const void* gx_p, float gx_scale, const void* gy_p, float gy_scale,      \
            const void* gz_p, float gz_scale, float alpha, float beta,               \
            const float* __restrict__ d, float* __restrict__ d_next,                 \
            float* __restrict__ res, float* __restrict__ zhat,                       \
            const float* __restrict__ s, double* __restrict__ z, long long n,        \
            long long sy, long long sz, int columns, int last)                       \
    {                                                                                \
        mixed_cheb_step<HX, HY, HZ>(gx_p, gx_scale, gy_p, gy_scale, gz_p, gz_scale,  \
                                    alpha, beta, d, d_next, res, zhat, s, z, n, sy,  \
                                    sz, columns, last);                              \
    }

MIXED_CHEB_STEP(hhh, 1, 1, 1)
MIXED_CHEB_STEP(hhs, 1, 1, 0)
MIXED_CHEB_STEP(hsh, 1, 0, 1)
MIXED_CHEB_STEP(hss, 1, 0, 0)
MIXED_CHEB_STEP(shh, 0, 1, 1)
MIXED_CHEB_STEP(shs, 0, 1, 0)
MIXED_CHEB_STEP(ssh, 0, 0, 1)
MIXED_CHEB_STEP(sss, 0, 0, 0)
