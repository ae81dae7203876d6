//! PCG with the Lanczos (Ritz) estimates of the spectrum of MA from its
//! coefficients, the Ritz vectors of the extreme values, and where a mode's
//! energy lives (by region class and z plane).

use cuth::linalg::QuadDiag;

pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Eigen-decomposition of a small symmetric matrix (cyclic Jacobi).
#[allow(clippy::needless_range_loop)]
pub fn jacobi(mut m: Vec<Vec<f64>>) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = m.len();
    let mut v: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
        .collect();
    for _ in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| m[i][j] * m[i][j])
            .sum();
        if off < 1e-30 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                if m[p][q].abs() < 1e-300 {
                    continue;
                }
                let th = (m[q][q] - m[p][p]) / (2.0 * m[p][q]);
                let t = th.signum() / (th.abs() + (th * th + 1.0).sqrt());
                let t = if th == 0.0 { 1.0 } else { t };
                let (c, s) = (1.0 / (t * t + 1.0).sqrt(), 0.0);
                let s = s + t * c;
                for k in 0..n {
                    let (mkp, mkq) = (m[k][p], m[k][q]);
                    m[k][p] = c * mkp - s * mkq;
                    m[k][q] = s * mkp + c * mkq;
                }
                for k in 0..n {
                    let (mpk, mqk) = (m[p][k], m[q][k]);
                    m[p][k] = c * mpk - s * mqk;
                    m[q][k] = s * mpk + c * mqk;
                }
                for row in v.iter_mut() {
                    let (vp, vq) = (row[p], row[q]);
                    row[p] = c * vp - s * vq;
                    row[q] = s * vp + c * vq;
                }
            }
        }
    }
    ((0..n).map(|i| m[i][i]).collect(), v)
}

pub struct PcgOut {
    pub it8: usize,
    pub ritz: Vec<f64>,
    /// Ritz vectors of MA for the smallest and the largest Ritz value.
    pub vmin: Vec<f64>,
    pub vmax: Vec<f64>,
}

pub fn pcg(a: &QuadDiag, b: &[f64], m: &mut dyn FnMut(&[f64]) -> Vec<f64>, maxit: usize) -> PcgOut {
    let n = b.len();
    let mut x = vec![0.0; n];
    let mut r = b.to_vec();
    let bn = dot(b, b).sqrt();
    let mut z = m(&r);
    let mut p = z.clone();
    let mut rz = dot(&r, &z);
    let (mut alphas, mut betas) = (vec![], vec![]);
    let mut qs: Vec<Vec<f64>> = vec![];
    let mut it8 = 0;
    for k in 0..maxit {
        if n < 400_000 {
            qs.push(
                z.iter()
                    .map(|v| v * if k % 2 == 0 { 1.0 } else { -1.0 } / rz.sqrt())
                    .collect(),
            );
        }
        let ap: Vec<f64> = (0..n).map(|i| a.row_apply(&p, i)).collect();
        let alpha = rz / dot(&p, &ap);
        for i in 0..n {
            x[i] += alpha * p[i];
            r[i] -= alpha * ap[i];
        }
        alphas.push(alpha);
        let rn = dot(&r, &r).sqrt() / bn;
        if rn < 1e-8 && it8 == 0 {
            it8 = k + 1;
        }
        if rn < 1e-14 {
            break;
        }
        z = m(&r);
        let rz2 = dot(&r, &z);
        let beta = rz2 / rz;
        betas.push(beta);
        rz = rz2;
        for i in 0..n {
            p[i] = z[i] + beta * p[i];
        }
    }
    let k = alphas.len();
    let mut t = vec![vec![0.0; k]; k];
    for j in 0..k {
        t[j][j] = 1.0 / alphas[j]
            + if j > 0 {
                betas[j - 1] / alphas[j - 1]
            } else {
                0.0
            };
        if j + 1 < k {
            let o = betas[j].sqrt() / alphas[j];
            t[j][j + 1] = o;
            t[j + 1][j] = o;
        }
    }
    let (ev, vecs) = jacobi(t);
    let mut idx: Vec<usize> = (0..k).collect();
    idx.sort_by(|&i, &j| ev[i].partial_cmp(&ev[j]).unwrap());
    let ritzvec = |c: usize| -> Vec<f64> {
        let mut y = vec![0.0; n];
        if qs.is_empty() {
            return vec![1.0; n];
        }
        for (j, q) in qs.iter().enumerate().take(k) {
            let s = vecs[j][c];
            for i in 0..n {
                y[i] += s * q[i];
            }
        }
        y
    };
    PcgOut {
        it8,
        ritz: idx.iter().map(|&i| ev[i]).collect(),
        vmin: ritzvec(idx[0]),
        vmax: ritzvec(idx[k - 1]),
    }
}

/// Region class of a position: 0 die, 1 growth zone, 2 far (max cells).
pub fn classes(w: &[f64]) -> Vec<usize> {
    let lo = w.iter().copied().fold(f64::MAX, f64::min);
    let hi = w.iter().copied().fold(0.0, f64::max);
    w.iter()
        .map(|&v| {
            if v <= lo * 1.01 {
                0
            } else if v >= hi * 0.99 {
                2
            } else {
                1
            }
        })
        .collect()
}

/// Energy share of a mode by (x class, y class) and by z plane: face
/// energies g (y_i − y_j)² split half to each cell, amb y_i².
#[allow(clippy::needless_range_loop)]
pub fn where_(a: &QuadDiag, y: &[f64], cx: &[usize], cy: &[usize], what: &str) {
    let (nx, ny, nz) = (a.nx, a.ny, a.nz);
    let plane = nx * ny;
    let mut e = vec![0.0; a.len()];
    for i in 0..a.len() {
        let (x, yy, z) = (i % nx, (i / nx) % ny, i / plane);
        e[i] += a.amb[i] * y[i] * y[i];
        let mut add = |j: usize, g: f64| {
            let v = 0.5 * g * (y[i] - y[j]).powi(2);
            e[i] += v;
            e[j] += v;
        };
        if x + 1 < nx {
            add(i + 1, a.gx[i]);
        }
        if yy + 1 < ny {
            add(i + nx, a.gy[i]);
        }
        if z + 1 < nz {
            add(i + plane, a.gz[i]);
        }
    }
    let tot: f64 = e.iter().sum();
    let mut by = [[0.0; 3]; 3];
    let mut cnt = [[0usize; 3]; 3];
    let mut byz = vec![0.0; nz];
    for i in 0..a.len() {
        let (x, yy, z) = (i % nx, (i / nx) % ny, i / plane);
        by[cx[x]][cy[yy]] += e[i] / tot;
        cnt[cx[x]][cy[yy]] += 1;
        byz[z] += e[i] / tot;
    }
    let names = ["die", "grow", "far"];
    let mut s = format!("  {what}: energy share (cells share) ");
    for i in 0..3 {
        for j in 0..3 {
            if cnt[i][j] > 0 {
                s += &format!(
                    "{}x{} {:.2}({:.2}) ",
                    names[i],
                    names[j],
                    by[i][j],
                    cnt[i][j] as f64 / a.len() as f64
                );
            }
        }
    }
    println!("{s}");
    println!(
        "  {what}: by z plane {}",
        byz.iter()
            .map(|v| format!("{v:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    // The hottest columns (x, y) by energy, with their widths.
    let mut col = vec![0.0; plane];
    for i in 0..a.len() {
        col[i % plane] += e[i] / tot;
    }
    let mut best: Vec<usize> = (0..plane).collect();
    best.sort_by(|&i, &j| col[j].partial_cmp(&col[i]).unwrap());
    let top: Vec<String> = best[..6]
        .iter()
        .map(|&j| format!("({},{}){:.3}", j % nx, j / nx, col[j]))
        .collect();
    println!("  {what}: top columns {}", top.join(" "));
    // Energy per x column (summed over y and z), the 12 largest, in x order.
    let mut px = vec![0.0; nx];
    for j in 0..plane {
        px[j % nx] += col[j];
    }
    let mut bx: Vec<usize> = (0..nx).collect();
    bx.sort_by(|&i, &j| px[j].partial_cmp(&px[i]).unwrap());
    let mut bx = bx[..12].to_vec();
    bx.sort();
    let wx = if a.wx.len() == nx {
        a.wx.clone()
    } else {
        vec![0.0; nx]
    };
    println!(
        "  {what}: x profile {}",
        bx.iter()
            .map(|&x| format!("{x}[{:.0}]{:.3}", wx[x] * 1e6, px[x]))
            .collect::<Vec<_>>()
            .join(" ")
    );
}
