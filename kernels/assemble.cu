// Assembly family: the thermal system built on the device from compact
// inputs (src/thermal/assembly_input.rs), one thread per cell, the same
// arithmetic as the host's src/assemble.rs in the same order, every
// operation an explicitly rounded intrinsic (__dmul_rn, __ddiv_rn,
// __dadd_rn) so that no contraction into FMA can change a bit: the device
// matrix equals the host matrix exactly (tests/gpu_assemble.rs).
//
// Materials: layer l is uniform (uniform[4l..4l+4] = kx, ky, kz, c) when
// plane_off[l] < 0, else cell j of its plane is planes[4(plane_off[l]+j)..].
// Per-cell mode (k(T), issue 17): when `cells` is not null, cell i's
// material is cells[4i..4i+4], written by asm_cell_mat_f64 from the
// temperature field (the layer arrays are then read for nothing else).
// Power: layer l's map is power[power_off[l] + j] (none when < 0), split
// evenly over its layer_cells[l] z cells. Film coefficients: h[j * stride]
// (stride 0: one value for the whole face).

struct AsmMat {
    double kx, ky, kz, c;
};

__device__ __forceinline__ AsmMat asm_mat(const double* __restrict__ uniform,
                                          const long long* __restrict__ plane_off,
                                          const double* __restrict__ planes,
                                          const double* __restrict__ cells,
                                          int l, long long j, long long i)
{
    const double* p;
    if (cells) {
        p = cells + 4 * i;
    } else {
        const long long off = plane_off[l];
        p = off < 0 ? uniform + 4 * (long long)l : planes + 4 * (off + j);
    }
    AsmMat m = {p[0], p[1], p[2], p[3]};
    return m;
}

// A temperature law (src/stack/law.rs, `Law::eval`), rounded as the host's
// (pow may differ from the host's libm by an ulp or two). Law `id`:
// hdr[3id] = kind (0 constant, 1 power law, 2 polynomial, 3 table),
// hdr[3id+1] = offset of its numbers in c, hdr[3id+2] = their count:
// constant v; power law v300, exponent; polynomial c0, c1, ...; table
// T0, v0, T1, v1, ... (strictly increasing T, held constant beyond the ends).
__device__ double asm_law(const int* __restrict__ hdr, const double* __restrict__ c, int id,
                          double t)
{
    const int kind = hdr[3 * id], n = hdr[3 * id + 2];
    const double* p = c + hdr[3 * id + 1];
    if (kind == 0)
        return p[0];
    if (kind == 1)
        return __dmul_rn(p[0], pow(__ddiv_rn(t, 300.0), p[1]));
    if (kind == 2) {
        double acc = 0.0;
        for (int i = n - 1; i >= 0; --i)
            acc = __dadd_rn(__dmul_rn(acc, t), p[i]);
        return acc;
    }
    const int pts = n / 2, last = pts - 1;
    if (t <= p[0])
        return p[1];
    if (t >= p[2 * last])
        return p[2 * last + 1];
    int i = 0;  // the first point above t (partition_point), clamped to 1..last
    while (i < pts && p[2 * i] <= t)
        ++i;
    i = i < 1 ? 1 : (i > last ? last : i);
    const double t0 = p[2 * i - 2], v0 = p[2 * i - 1], t1 = p[2 * i], v1 = p[2 * i + 1];
    return __dadd_rn(v0, __ddiv_rn(__dmul_rn(__dsub_rn(v1, v0), __dsub_rn(t, t0)),
                                   __dsub_rn(t1, t0)));
}

__device__ __forceinline__ bool asm_positive(double v)
{
    return isfinite(v) && v > 0.0;
}

// out[i] = law id at t[i] (the law kernel's test against the host).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
asm_law_eval_f64(const int* __restrict__ hdr, const double* __restrict__ c, int id,
                 const double* __restrict__ t, double* __restrict__ out, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = asm_law(hdr, c, id, t[i]);
}

// The material of every cell at T = theta + t_amb, as the host's
// `assemble::cell_materials`: the layer's four laws (law_of_layer[4l..]:
// kx, ky, kz, c; -1: no law, the constant uniform[4l..]) at the cell's T,
// mixed with the layer's in-plane paint when mix_off[l] >= 0 (mix[5(off+j)..]
// = own fraction, then the painted k in x, y, z and c, area-weighted), then
// every patch with a law that covers the cell, in the host's order
// (entries patch_row[row_off[l] + j] .. patch_row[row_off[l] + j + 1] of
// patch_f and patch_id; patch p's laws patch_law[4p..], its constant
// patch_mat[4p..]), corrected by f * (value at T - constant). A law value
// that is not positive and finite sets *bad = min(*bad, i). Writes
// cells[4i..4i+4] = kx, ky, kz, c.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
asm_cell_mat_f64(const double* __restrict__ theta, double t_amb,
                 const int* __restrict__ layer_of_z, const int* __restrict__ law_of_layer,
                 const double* __restrict__ uniform, const long long* __restrict__ mix_off,
                 const double* __restrict__ mix, const int* __restrict__ hdr,
                 const double* __restrict__ lc, const long long* __restrict__ row_off,
                 const long long* __restrict__ patch_row, const double* __restrict__ patch_f,
                 const int* __restrict__ patch_id, const int* __restrict__ patch_law,
                 const double* __restrict__ patch_mat, long long plane, long long n,
                 double* __restrict__ cells, unsigned long long* __restrict__ bad)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long z = i / plane, j = i - z * plane;
        const int l = layer_of_z[z];
        const double t = __dadd_rn(theta[i], t_amb);
        double v[4];
        bool ok = true;
        for (int d = 0; d < 4; ++d) {
            const int id = law_of_layer[4 * l + d];
            v[d] = id < 0 ? uniform[4 * l + d] : asm_law(hdr, lc, id, t);
            if (id >= 0)
                ok = ok && asm_positive(v[d]);
        }
        const long long mo = mix_off[l];
        if (mo >= 0) {
            const double* m = mix + 5 * (mo + j);
            for (int d = 0; d < 4; ++d)
                v[d] = __dadd_rn(m[1 + d], __dmul_rn(m[0], v[d]));
        }
        const long long ro = row_off[l];
        if (ro >= 0) {
            for (long long e = patch_row[ro + j]; e < patch_row[ro + j + 1]; ++e) {
                const int p = patch_id[e];
                const double f = patch_f[e];
                for (int d = 0; d < 4; ++d) {
                    const double at = asm_law(hdr, lc, patch_law[4 * p + d], t);
                    ok = ok && asm_positive(at);
                    v[d] = __dadd_rn(v[d], __dmul_rn(f, __dsub_rn(at, patch_mat[4 * p + d])));
                }
            }
        }
        if (!ok)
            atomicMin(bad, (unsigned long long)i);
        for (int d = 0; d < 4; ++d)
            cells[4 * i + d] = v[d];
    }
}

// Two half-cells in series per unit face area: 1 / (d1/(2 k1) + d2/(2 k2)).
__device__ __forceinline__ double asm_series(double d1, double k1, double d2, double k2)
{
    return __ddiv_rn(1.0, __dadd_rn(__ddiv_rn(d1, __dmul_rn(2.0, k1)),
                                    __ddiv_rn(d2, __dmul_rn(2.0, k2))));
}

// Half-cell in series with the film: area / (dz/(2 kz) + 1/h).
__device__ __forceinline__ double asm_film(double area, double dz, double kz, double h)
{
    return __ddiv_rn(area, __dadd_rn(__ddiv_rn(dz, __dmul_rn(2.0, kz)), __ddiv_rn(1.0, h)));
}

// Off-diagonals gx, gy, gz, heat capacity, right-hand side, and the
// conductances to ambient g_top (z = nz-1) and g_bottom (z = 0; zero when
// has_bottom is 0). Bytes per cell: 5 written (+ the compact inputs, cached).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
asm_faces_f64(const double* __restrict__ dx, const double* __restrict__ dy,
              const double* __restrict__ dz, const int* __restrict__ layer_of_z,
              const double* __restrict__ layer_cells,
              const double* __restrict__ uniform, const long long* __restrict__ plane_off,
              const double* __restrict__ planes, const double* __restrict__ cells,
              const long long* __restrict__ power_off, const double* __restrict__ power,
              const double* __restrict__ h_top, long long top_stride,
              const double* __restrict__ h_bottom, long long bottom_stride, int has_bottom,
              long long nx, long long ny, long long nz,
              double* __restrict__ gx, double* __restrict__ gy, double* __restrict__ gz,
              double* __restrict__ capacity, double* __restrict__ rhs,
              double* __restrict__ g_top, double* __restrict__ g_bottom)
{
    const long long plane = nx * ny, n = plane * nz;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long z = i / plane, j = i - z * plane, y = j / nx, x = j - y * nx;
        const int l = layer_of_z[z];
        const AsmMat m = asm_mat(uniform, plane_off, planes, cells, l, j, i);
        const double dxx = dx[x], dyy = dy[y], dzz = dz[z];
        const double area_z = __dmul_rn(dxx, dyy);
        double v = 0.0;
        if (x + 1 < nx) {
            const AsmMat o = asm_mat(uniform, plane_off, planes, cells, l, j + 1, i + 1);
            v = __dmul_rn(__dmul_rn(dyy, dzz), asm_series(dxx, m.kx, dx[x + 1], o.kx));
        }
        gx[i] = v;
        v = 0.0;
        if (y + 1 < ny) {
            const AsmMat o = asm_mat(uniform, plane_off, planes, cells, l, j + nx, i + nx);
            v = __dmul_rn(__dmul_rn(dxx, dzz), asm_series(dyy, m.ky, dy[y + 1], o.ky));
        }
        gy[i] = v;
        v = 0.0;
        if (z + 1 < nz) {
            const AsmMat o = asm_mat(uniform, plane_off, planes, cells, layer_of_z[z + 1], j,
                                     i + plane);
            v = __dmul_rn(area_z, asm_series(dzz, m.kz, dz[z + 1], o.kz));
        }
        gz[i] = v;
        if (capacity) // null: a steady solve, which reads no capacity
            capacity[i] = __dmul_rn(m.c, __dmul_rn(area_z, dzz));
        const long long po = power_off[l];
        rhs[i] = po < 0 ? 0.0 : __dmul_rn(power[po + j], __ddiv_rn(1.0, layer_cells[l]));
        if (z == nz - 1)
            g_top[j] = asm_film(area_z, dzz, m.kz, h_top[j * top_stride]);
        if (z == 0)
            g_bottom[j] = has_bottom ? asm_film(area_z, dzz, m.kz, h_bottom[j * bottom_stride])
                                     : 0.0;
    }
}

// Diagonal (the row's conductances plus those to ambient, summed in the
// host's order) and amb, the coupling to ambient. A row whose diagonal
// would be 0 (an absent cell: no conductance at all) gets an identity row,
// d = amb = 1, as the host's.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
asm_diag_f64(const double* __restrict__ gx, const double* __restrict__ gy,
             const double* __restrict__ gz, const double* __restrict__ g_top,
             const double* __restrict__ g_bottom, long long nx, long long ny, long long nz,
             double* __restrict__ diag, double* __restrict__ amb)
{
    const long long plane = nx * ny, n = plane * nz;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long z = i / plane, j = i - z * plane;
        double s = __dadd_rn(__dadd_rn(gx[i], gy[i]), gz[i]);
        if (j % nx > 0)
            s = __dadd_rn(s, gx[i - 1]);
        if (j >= nx)
            s = __dadd_rn(s, gy[i - nx]);
        if (z > 0)
            s = __dadd_rn(s, gz[i - plane]);
        double e = 0.0;
        if (z == 0)
            e = __dadd_rn(e, g_bottom[j]);
        if (z == nz - 1)
            e = __dadd_rn(e, g_top[j]);
        if (z == nz - 1)
            s = __dadd_rn(s, g_top[j]);
        if (z == 0)
            s = __dadd_rn(s, g_bottom[j]);
        diag[i] = s == 0.0 ? 1.0 : s;
        amb[i] = s == 0.0 ? 1.0 : e;
    }
}

// b -= c * amb: the shift of src/linalg/offset.rs (rounded as the host's
// b - c*e). Bytes per row: amb, b read + b written = 24 B.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
asm_shift_f64(const double* __restrict__ amb, double c, double* __restrict__ b, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        b[i] = __dsub_rn(b[i], __dmul_rn(c, amb[i]));
}

// The right-hand side alone (a transient run's new trace row, issue 15):
// rhs[i] from the per-layer power maps exactly as asm_faces_f64 writes it.
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
asm_power_f64(const int* __restrict__ layer_of_z, const double* __restrict__ layer_cells,
              const long long* __restrict__ power_off, const double* __restrict__ power,
              long long plane, long long nz, double* __restrict__ rhs)
{
    const long long n = plane * nz;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long z = i / plane, j = i - z * plane;
        const int l = layer_of_z[z];
        const long long po = power_off[l];
        rhs[i] = po < 0 ? 0.0 : __dmul_rn(power[po + j], __ddiv_rn(1.0, layer_cells[l]));
    }
}
