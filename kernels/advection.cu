// The coolant's upwind couplings of a liquid-cooled stack (see
// src/matrix/advection.rs): per coolant entry k, its row cell[k], the row
// upstream of it up[k] (CUTH_INLET for a line's first cell) and the line's
// m_dot*c, w[k]. Entries run along each coolant line in flow order; line L
// holds entries start[L] .. start[L + 1], and within a line up[k] is the
// previous entry's row (checked on upload).

#define CUTH_INLET 0xffffffffu

// y[cell] += scale * w * x[up] on every coolant cell with an upstream cell.
// Each row appears once in cell[], so the writes do not collide.
// Bytes per coolant cell: cell, up (8) + w (8) + x, y read + y written (24).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
advection_add_upstream_f64(const unsigned int* __restrict__ cell,
                           const unsigned int* __restrict__ up,
                           const double* __restrict__ w, double scale,
                           const double* __restrict__ x, double* __restrict__ y,
                           long long entries)
{
    for (long long k = CUTH_ROW0; k < entries; k += CUTH_STRIDE) {
        const unsigned int u = up[k];
        if (u != CUTH_INLET) {
            y[cell[k]] += scale * w[k] * __ldg(x + u);
        }
    }
}

// z[cell] = (r[cell] + w * z[up]) / d[cell] along each line, in flow order:
// one thread per line, the upstream value carried in a register (the
// chain is sequential along a line, independent across lines).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
advection_upwind_sweep_f64(const unsigned int* __restrict__ cell,
                           const unsigned int* __restrict__ up,
                           const double* __restrict__ w,
                           const unsigned int* __restrict__ start,
                           const double* __restrict__ d,
                           const double* __restrict__ r, double* __restrict__ z,
                           long long lines)
{
    for (long long l = CUTH_ROW0; l < lines; l += CUTH_STRIDE) {
        double prev = 0.0;
        for (unsigned int k = start[l]; k < start[l + 1]; ++k) {
            const unsigned int c = cell[k];
            const double upstream = up[k] == CUTH_INLET ? 0.0 : w[k] * prev;
            prev = (__ldg(r + c) + upstream) / __ldg(d + c);
            z[c] = prev;
        }
    }
}
