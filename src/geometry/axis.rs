//! Cell edges along one axis: uniform ([`uniform_axis`]), or the
//! non-uniform axis of a `[grid] cell = ...` stack ([`axis_edges`]): grid
//! lines snapped to every given edge (outlines, regions, floorplan units,
//! inline blocks, cooling rectangles), cells no wider than `cell` over the
//! powered dies and growing by at most `growth` per cell away from them.
//!
//! Between two snapped lines the cells follow the size field
//! `s(x) = min(max_cell, cell + ln(growth)·dist(x, powered))`: n = ⌈∫ dx/s⌉ cells placed at
//! equal steps of that integral, so neighbouring cells differ by at most the
//! factor `growth` (exp(ln g · ∫/n) ≤ g), and inside a powered interval the
//! cells are uniform of size ≤ `cell`. Only where two snapped lines lie closer
//! than the local size does the ratio exceed `growth` (the line wins); lines
//! closer than a tenth of `cell` are merged.

/// Snapped lines closer than this fraction of `cell` are one line (the
/// first kept): a 2 um sliver between two floorplan units (HotSpot's
/// rounded coordinates) must not become a column of 2 um cells. Power and
/// materials are rasterized by overlap area, so a merged edge stays exact in
/// the totals.
const MERGE: f64 = 0.1;
/// Samples per interval of the numerical integral of 1/s.
const SAMPLES: usize = 256;
/// Most cells per axis the mesher will make.
pub const MAX_AXIS_CELLS: usize = 1 << 16;

/// `n` equal widths over `extent` and their edges `i·d` (computed as the
/// uniform grid always did, so uniform results stay bit-identical).
pub fn uniform_axis(extent: f64, n: usize) -> (Vec<f64>, Vec<f64>) {
    let d = extent / n as f64;
    (vec![d; n], (0..=n).map(|i| i as f64 * d).collect())
}

/// Edges of cells of the given widths, from 0.
pub fn edges_of(widths: &[f64]) -> Vec<f64> {
    std::iter::once(0.0)
        .chain(widths.iter().scan(0.0, |s, w| {
            *s += w;
            Some(*s)
        }))
        .collect()
}

/// Widths of the cells between consecutive `edges`.
pub fn widths_of(edges: &[f64]) -> Vec<f64> {
    edges.windows(2).map(|p| p[1] - p[0]).collect()
}

/// Edges of the cells of one axis `[0, extent]`, from 0 to `extent`. Every
/// kept snapped line is an edge exactly (the value given, not a running
/// sum of widths that misses it by rounding and leaves a sliver of the
/// next cell under an outline).
///
/// `lines`: coordinates that must be cell edges (clamped to the extent);
/// `fine`: intervals (powered dies) whose cells are at most `cell` wide (empty:
/// the whole axis); `growth` ≥ 1; no cell wider than `max_cell`. Fails (with the count) beyond
/// [`MAX_AXIS_CELLS`].
pub fn axis_edges(
    extent: f64,
    lines: &[f64],
    fine: &[(f64, f64)],
    cell: f64,
    growth: f64,
    max_cell: f64,
) -> Result<Vec<f64>, usize> {
    let tol = (MERGE * cell).min(0.5 * extent);
    let mut ls: Vec<f64> = lines
        .iter()
        .map(|v| v.clamp(0.0, extent))
        .chain([0.0, extent])
        .collect();
    ls.sort_by(f64::total_cmp);
    ls.dedup_by(|b, a| *b - *a <= tol);
    // The last kept line may sit within tol below the extent: make it the edge.
    if ls.len() > 1 && extent - ls[ls.len() - 1] <= tol {
        ls.pop();
    }
    ls.push(extent);
    let whole = [(0.0, extent)];
    let fine = if fine.is_empty() { &whole[..] } else { fine };
    let slope = growth.max(1.0).ln();
    let size = |x: f64| -> f64 {
        fine.iter()
            .map(|&(a, b)| {
                let d = if x < a {
                    a - x
                } else if x > b {
                    x - b
                } else {
                    0.0
                };
                cell + slope * d
            })
            .fold(max_cell, f64::min)
    };
    let mut edges = vec![0.0];
    for w in ls.windows(2) {
        let (a, b) = (w[0], w[1]);
        let len = b - a;
        // Cumulative ∫ 1/s over SAMPLES equal steps (trapezoid rule).
        let h = len / SAMPLES as f64;
        let inv: Vec<f64> = (0..=SAMPLES)
            .map(|k| 1.0 / size(a + k as f64 * h))
            .collect();
        let mut cum = vec![0.0; SAMPLES + 1];
        for k in 0..SAMPLES {
            cum[k + 1] = cum[k] + 0.5 * h * (inv[k] + inv[k + 1]);
        }
        let total = cum[SAMPLES];
        let n = ((total - 1e-9).ceil() as usize).max(1);
        if edges.len() - 1 + n > MAX_AXIS_CELLS {
            return Err(edges.len() - 1 + n);
        }
        if inv.iter().all(|&v| v == inv[0]) {
            // Constant size: equal steps, the line itself last.
            edges.extend((1..n).map(|i| a + len * (i as f64 / n as f64)));
            edges.push(b);
            continue;
        }
        // Edges where the integral reaches k·total/n (linear inside a step).
        let mut k = 0;
        for i in 1..n {
            let target = total * i as f64 / n as f64;
            while cum[k + 1] < target {
                k += 1;
            }
            let t = (target - cum[k]) / (cum[k + 1] - cum[k]);
            edges.push(a + (k as f64 + t) * h);
        }
        edges.push(b);
    }
    Ok(edges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_edges_and_fine_cells_are_small() {
        let lines = [3e-3, 7e-3, 7.0000000000001e-3, 5.5e-3];
        let w = widths_of(
            &axis_edges(20e-3, &lines, &[(3e-3, 7e-3)], 1e-4, 1.2, f64::INFINITY).unwrap(),
        );
        let edges = edges_of(&w);
        assert!((edges.last().unwrap() - 20e-3).abs() < 1e-15);
        for l in [3e-3, 5.5e-3, 7e-3] {
            assert!(edges.iter().any(|e| (e - l).abs() < 1e-12), "line {l}");
        }
        for (i, wi) in w.iter().enumerate() {
            let c = 0.5 * (edges[i] + edges[i + 1]);
            if (3e-3..7e-3).contains(&c) {
                assert!(*wi <= 1e-4 * (1.0 + 1e-9), "{wi}");
            }
        }
        for p in w.windows(2) {
            let r = (p[0] / p[1]).max(p[1] / p[0]);
            assert!(r <= 1.2 * (1.0 + 1e-6), "ratio {r}");
        }
        // Far fewer cells than the uniform grid of the smallest cell.
        assert!(w.len() < 100, "{}", w.len());
    }

    #[test]
    fn no_fine_interval_means_uniform() {
        let w = widths_of(&axis_edges(1e-3, &[], &[], 1e-4, 1.2, f64::INFINITY).unwrap());
        assert_eq!(w.len(), 10);
        assert!(w.iter().all(|&x| (x - 1e-4).abs() < 1e-18));
    }
}
