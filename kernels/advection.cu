// The coolant's couplings of a liquid-cooled stack (see
// src/matrix/advection.rs): per coolant entry k, its row cell[k], the row
// upstream of it up[k] (CUTH_INLET for a line's first cell) with the
// coupling A[cell, up] = -w[k], and with central differencing (has_down)
// the row downstream down[k] (CUTH_OUTLET for a line's last cell) with
// A[cell, down] = +w_down[k] and the diagonal taken back from the Quad-Diag,
// A[cell, cell] = d - w_self[k]. Entries run along each coolant line in flow
// order; line L holds entries start[L] .. start[L + 1], and within a line
// up[k] and down[k] are the previous and next entries' rows (checked on
// upload).

#define CUTH_INLET 0xffffffffu
#define CUTH_OUTLET 0xffffffffu

// y[cell] += scale * (w x[up] - w_down x[down] + w_self x[cell]) on every
// coolant cell.
// Each row appears once in cell[], so the writes do not collide.
// Bytes per coolant cell, upwind: cell, up (8) + w (8) + x, y read + y
// written (24); central adds down, w_down and its x (20).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
advection_add_couplings_f64(const unsigned int* __restrict__ cell,
                            const unsigned int* __restrict__ up,
                            const double* __restrict__ w,
                            const unsigned int* __restrict__ down,
                            const double* __restrict__ w_down,
                            const double* __restrict__ w_self, int has_down,
                            double scale, const double* __restrict__ x,
                            double* __restrict__ y, long long entries)
{
    for (long long k = CUTH_ROW0; k < entries; k += CUTH_STRIDE) {
        const unsigned int u = up[k], c = cell[k];
        double l = u != CUTH_INLET ? w[k] * __ldg(x + u) : 0.0;
        if (has_down) {
            const unsigned int d = down[k];
            if (d != CUTH_OUTLET) {
                l -= w_down[k] * __ldg(x + d);
            }
            l += w_self[k] * __ldg(x + c);
        }
        y[c] += scale * l;
    }
}

// z = (D - L)^-1 r along each line (the Thomas algorithm on the line's
// chain): one thread per line, a forward pass in flow order with the
// upstream value in a register, and with central differencing the pass
// back, the forward pass's ratios kept in `ratio` (one per entry).
extern "C" __global__ void __launch_bounds__(CUTH_BLOCK)
advection_line_solve_f64(const unsigned int* __restrict__ cell,
                         const unsigned int* __restrict__ up,
                         const double* __restrict__ w,
                         const unsigned int* __restrict__ down,
                         const double* __restrict__ w_down,
                         const double* __restrict__ w_self,
                         const unsigned int* __restrict__ start,
                         double* __restrict__ ratio, int has_down,
                         const double* __restrict__ d,
                         const double* __restrict__ r, double* __restrict__ z,
                         long long lines)
{
    for (long long l = CUTH_ROW0; l < lines; l += CUTH_STRIDE) {
        const unsigned int k0 = start[l], k1 = start[l + 1];
        double prev = 0.0, prev_ratio = 0.0;
        for (unsigned int k = k0; k < k1; ++k) {
            const unsigned int c = cell[k];
            const double wk = up[k] == CUTH_INLET ? 0.0 : w[k];
            const double dc = has_down ? __ldg(d + c) - w_self[k] : __ldg(d + c);
            const double pivot = dc + wk * prev_ratio;
            prev = (__ldg(r + c) + wk * prev) / pivot;
            z[c] = prev;
            if (has_down) {
                prev_ratio = down[k] == CUTH_OUTLET ? 0.0 : w_down[k] / pivot;
                ratio[k] = prev_ratio;
            }
        }
        if (has_down && k1 > k0 + 1) {
            double next = prev;
            for (unsigned int k = k1 - 1; k-- > k0;) {
                const unsigned int c = cell[k];
                next = z[c] - ratio[k] * next;
                z[c] = next;
            }
        }
    }
}
