// Assembly family: the thermal system built on the device from compact
// inputs (src/thermal/assembly_input.rs), one thread per cell, the same
// arithmetic as the host's src/assemble.rs in the same order, every
// operation an explicitly rounded intrinsic (__dmul_rn, __ddiv_rn,
// __dadd_rn) so that no contraction into FMA can change a bit: the device
// matrix equals the host matrix exactly (tests/gpu_assemble.rs).
//
// Materials: layer l is uniform (uniform[4l..4l+4] = kx, ky, kz, c) when
// plane_off[l] < 0, else cell j of its plane is planes[4(plane_off[l]+j)..].
// Power: layer l's map is power[power_off[l] + j] (none when < 0), split
// evenly over its layer_cells[l] z cells. Film coefficients: h[j * stride]
// (stride 0: one value for the whole face).

struct AsmMat {
    double kx, ky, kz, c;
};

__device__ __forceinline__ AsmMat asm_mat(const double* __restrict__ uniform,
                                          const long long* __restrict__ plane_off,
                                          const double* __restrict__ planes,
                                          int l, long long j)
{
    long long off = plane_off[l];
    const double* p = off < 0 ? uniform + 4 * (long long)l : planes + 4 * (off + j);
    AsmMat m = {p[0], p[1], p[2], p[3]};
    return m;
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
              const double* __restrict__ planes,
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
        const AsmMat m = asm_mat(uniform, plane_off, planes, l, j);
        const double dxx = dx[x], dyy = dy[y], dzz = dz[z];
        const double area_z = __dmul_rn(dxx, dyy);
        double v = 0.0;
        if (x + 1 < nx) {
            const AsmMat o = asm_mat(uniform, plane_off, planes, l, j + 1);
            v = __dmul_rn(__dmul_rn(dyy, dzz), asm_series(dxx, m.kx, dx[x + 1], o.kx));
        }
        gx[i] = v;
        v = 0.0;
        if (y + 1 < ny) {
            const AsmMat o = asm_mat(uniform, plane_off, planes, l, j + nx);
            v = __dmul_rn(__dmul_rn(dxx, dzz), asm_series(dyy, m.ky, dy[y + 1], o.ky));
        }
        gy[i] = v;
        v = 0.0;
        if (z + 1 < nz) {
            const AsmMat o = asm_mat(uniform, plane_off, planes, layer_of_z[z + 1], j);
            v = __dmul_rn(area_z, asm_series(dzz, m.kz, dz[z + 1], o.kz));
        }
        gz[i] = v;
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
