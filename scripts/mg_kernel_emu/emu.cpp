#include "shim.h"
#include "kern.inc"
#include <cstdio>
#include <vector>
#include <random>
// Emulates mg_restrict_f64 / mg_prolong_f64 (one block, threads in turn) on an
// irregular aggregation and compares with a direct reference.
int main() {
    const long long nx = 11, ny = 9, nz = 3, plane = nx * ny, n = plane * nz;
    std::vector<long long> xs = {0, 1, 3, 4, 6, 8, 9, 11}, ys = {0, 2, 3, 5, 6, 7, 9};
    long long nxc = xs.size() - 1, nyc = ys.size() - 1, nc = nxc * nyc * nz;
    std::vector<long long> xmap(nx), ymap(ny);
    for (long long k = 0; k < nxc; ++k) for (long long v = xs[k]; v < xs[k + 1]; ++v) xmap[v] = k;
    for (long long k = 0; k < nyc; ++k) for (long long v = ys[k]; v < ys[k + 1]; ++v) ymap[v] = k;
    std::vector<long long> maps(xs); maps.insert(maps.end(), ys.begin(), ys.end());
    maps.insert(maps.end(), xmap.begin(), xmap.end()); maps.insert(maps.end(), ymap.begin(), ymap.end());
    std::mt19937 rng(3); std::uniform_real_distribution<double> u(0.5, 2.0);
    std::vector<double> d(n), gx(n), gy(n), gz(n), b(n), x(n), xc(nc), bc(nc, 0.0), xp(n);
    for (long long i = 0; i < n; ++i) {
        long long xx = i % nx, y = (i % plane) / nx, z = i / plane;
        gx[i] = xx + 1 < nx ? u(rng) : 0; gy[i] = y + 1 < ny ? u(rng) : 0; gz[i] = z + 1 < nz ? u(rng) : 0;
        d[i] = 10 + u(rng); b[i] = u(rng); x[i] = u(rng); xp[i] = u(rng);
    }
    for (auto& v : xc) v = u(rng);
    gridDim.x = 1;
    std::vector<double> bc_k(nc, -1), xp_k(xp);
    for (unsigned t = 0; t < CUTH_BLOCK; ++t) {
        threadIdx.x = t;
        mg_restrict_f64(d.data(), gx.data(), gy.data(), gz.data(), b.data(), x.data(), bc_k.data(), nx, ny, nz, nxc, nyc, maps.data());
        mg_prolong_f64(xc.data(), xp_k.data(), nx, ny, nz, nxc, nyc, maps.data());
    }
    double err = 0;
    for (long long i = 0; i < n; ++i) {
        long long xx = i % nx, y = (i % plane) / nx, z = i / plane;
        double ax = d[i] * x[i];
        if (xx + 1 < nx) ax -= gx[i] * x[i + 1];
        if (xx > 0) ax -= gx[i - 1] * x[i - 1];
        if (y + 1 < ny) ax -= gy[i] * x[i + nx];
        if (y > 0) ax -= gy[i - nx] * x[i - nx];
        if (z + 1 < nz) ax -= gz[i] * x[i + plane];
        if (z > 0) ax -= gz[i - plane] * x[i - plane];
        long long p = xmap[xx] + nxc * (ymap[y] + nyc * z);
        bc[p] += b[i] - ax;
        double want = xp[i] + xc[p];
        err = std::max(err, std::abs(xp_k[i] - want));
    }
    for (long long c = 0; c < nc; ++c) err = std::max(err, std::abs(bc_k[c] - bc[c]) / (1 + std::abs(bc[c])));
    printf("max err %.3e over %lld fine, %lld coarse cells\n", err, n, nc);
    return err < 1e-12 ? 0 : 1;
}
