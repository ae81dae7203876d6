//! The host side of the device's block statistics against the host path:
//! the factored geometry against `coverage`, the partials merged against
//! `layer_block_stats`.

use super::*;
use crate::power::rasterize::coverage;
use crate::power::Block;
use crate::thermal::block_stats::layer_block_stats;
use crate::thermal::steady::rasterize_layers;
use std::path::Path;

fn load(name: &str, grid: Option<(usize, usize)>) -> Stack {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let s = Stack::load(&root.join("configs").join(name)).unwrap();
    match grid {
        Some((nx, ny)) => s.with_grid(nx, ny).unwrap(),
        None => s,
    }
}

/// A little generator (the tests need no crate for it).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = (self.0)
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// Rectangles clipping cells' corners and edges anywhere on the footprint
/// (some partly or wholly outside it, one degenerate), and the stacks'
/// own blocks.
fn rects(grid: &Grid, power: &[LayerPower], rng: &mut Lcg) -> Vec<Rect> {
    let (w, h) = (grid.width(), grid.length());
    let mut out: Vec<Rect> = (power.iter())
        .flat_map(|p| p.blocks.iter().flat_map(|b| b.rects.iter().copied()))
        .collect();
    for _ in 0..200 {
        let (x0, y0) = (rng.next(-0.1 * w, w), rng.next(-0.1 * h, h));
        let (dw, dh) = (rng.next(0.0, 0.3 * w), rng.next(0.0, 0.3 * h));
        out.push(Rect {
            x0,
            y0,
            x1: x0 + dw,
            y1: y0 + dh,
        });
    }
    // On the grid's own edges, and a line of no area.
    let (i, j) = (grid.nx / 3, grid.ny / 2);
    out.push(Rect {
        x0: grid.xe[i],
        y0: grid.ye[j],
        x1: grid.xe[i + 2],
        y1: grid.ye[j + 1],
    });
    out.push(Rect {
        x0: grid.xe[i],
        y0: grid.ye[1],
        x1: grid.xe[i],
        y1: grid.ye[j],
    });
    out
}

/// Rows × columns, row by row, with weight ox·oy: `coverage`'s cells and
/// areas bit for bit, on uniform and non-uniform grids.
#[test]
fn factored_cells_are_coverage() {
    let mut rng = Lcg(15);
    let mut clipped = 0;
    for (name, g) in [
        ("hotspot_ev6_3d.toml", None),
        ("hotspot_ev6_3d.toml", Some((97, 61))),
        ("hbm_2p5d.toml", None),
        ("hbm_2p5d.toml", Some((241, 179))),
        ("mol_f2f.toml", Some((301, 203))),
    ] {
        let stack = load(name, g);
        let grid = Grid::from_stack(&stack);
        let power = rasterize_layers(&stack, &grid).unwrap();
        for r in rects(&grid, &power, &mut rng) {
            let want = coverage(&r, &grid);
            let (cols, rows) = block_axes(&r, &grid);
            let got: Vec<(usize, f64)> = (rows.iter())
                .flat_map(|&(iy, oy)| {
                    cols.iter()
                        .map(move |&(ix, ox)| (ix + grid.nx * iy, ox * oy))
                })
                .collect();
            assert_eq!(got.len(), want.len(), "{name}: {r:?}");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!((g.0, g.1.to_bits()), (w.0, w.1.to_bits()), "{name}: {r:?}");
            }
            // Overlaps are lengths within the cells.
            // (Edges are sums of widths: a whole cell's overlap is its
            // width to rounding.)
            for &(ix, ox) in &cols {
                assert!(
                    ox > 0.0 && ox <= grid.dx[ix] * (1.0 + 1e-12),
                    "{name}: column {ix}"
                );
            }
            for &(iy, oy) in &rows {
                assert!(
                    oy > 0.0 && oy <= grid.dy[iy] * (1.0 + 1e-12),
                    "{name}: row {iy}"
                );
            }
            let partial = |v: &[(usize, f64)], d: &[f64]| v.iter().any(|&(i, o)| o < 0.999 * d[i]);
            clipped += usize::from(partial(&cols, &grid.dx) && partial(&rows, &grid.dy));
        }
    }
    assert!(
        clipped > 100,
        "rectangles clipping cells in both axes: {clipped}"
    );
}

/// `layer_blocks`' tables: offsets, centre cells and chunks as the blocks
/// give them.
#[test]
fn tables_hold_every_block() {
    let stack = load("hotspot_ev6_3d.toml", None);
    let grid = Grid::from_stack(&stack);
    let power = rasterize_layers(&stack, &grid).unwrap();
    let req = layer_blocks(&grid, &power);
    let with_blocks = power.iter().filter(|p| !p.blocks.is_empty()).count();
    assert_eq!(req.len(), with_blocks);
    let blocks: usize = req.iter().map(|lb| lb.blocks.len()).sum();
    assert_eq!(blocks, 129, "hotspot_ev6_3d's units");
    for lb in &req {
        let p = &power[lb.layer];
        assert_eq!(lb.z, grid.layer_z[lb.layer]);
        let (mut c, mut r) = (0, 0);
        for (b, &[c0, nc, r0, nr, ctr]) in lb.blocks.iter().enumerate() {
            assert_eq!((c0, r0), (c, r), "block {b}: offsets");
            (c, r) = (c + nc, r + nr);
            let rect = &p.blocks[lb.owner[b]].main_rect();
            let (x, y) = (ctr % grid.nx, ctr / grid.nx);
            let (cx, cy) = (0.5 * (rect.x0 + rect.x1), 0.5 * (rect.y0 + rect.y1));
            assert!(
                grid.xe[x] <= cx && cx < grid.xe[x + 1],
                "block {b}: centre x"
            );
            assert!(
                grid.ye[y] <= cy && cy < grid.ye[y + 1],
                "block {b}: centre y"
            );
            let firsts: Vec<usize> = (lb.chunks.iter())
                .filter(|(k, _)| *k == b)
                .map(|&(_, f)| f)
                .collect();
            let want: Vec<usize> = (0..(nc * nr).max(1)).step_by(CHUNK).collect();
            assert_eq!(firsts, want, "block {b}: chunks");
        }
        assert_eq!((c, r), (lb.cols.len(), lb.rows.len()));
        assert_eq!((lb.ox.len(), lb.oy.len()), (c, r));
    }
}

/// The partials of a map merged as the device's are: `layer_block_stats`
/// of the map with NaN at absent cells (min, max and centre exact, the
/// mean bit for bit within one chunk and within the error bound of two
/// loops over n terms, 4·n·u, over several), on a
/// stack with absent cells and blocks over them and on blocks of several
/// chunks.
#[test]
fn merged_partials_equal_layer_block_stats() {
    let mut rng = Lcg(1515);
    let mut several = 0;
    let mut nan = 0;
    // Absent cells marked NaN, and (for blocks of several chunks with a
    // mean) not marked.
    for (name, g, mark) in [
        ("hbm_2p5d.toml", None, true),
        ("hotspot_ev6_3d.toml", Some((97, 61)), true),
        ("hbm_2p5d.toml", Some((241, 179)), true),
        ("hbm_2p5d.toml", Some((241, 179)), false),
    ] {
        let stack = load(name, g);
        let grid = Grid::from_stack(&stack);
        let mut power = rasterize_layers(&stack, &grid).unwrap();
        // Extra blocks: random ones on every powered layer, and one over
        // the whole footprint (several chunks).
        let rs = rects(&grid, &[], &mut rng);
        for p in power.iter_mut().filter(|p| !p.blocks.is_empty()) {
            for (k, r) in rs.iter().enumerate().step_by(7) {
                p.blocks.push(Block::new(format!("r{k}"), *r, 0.0));
            }
            let all = Rect {
                x0: 0.0,
                y0: 0.0,
                x1: grid.width(),
                y1: grid.length(),
            };
            p.blocks.push(Block::new("all", all, 1.0));
            // A block of several rectangles: one box each, merged.
            p.blocks.push(Block {
                name: "split".into(),
                rects: rs.iter().take(3).copied().collect(),
                power_w: 1.0,
            });
        }
        let req = layer_blocks(&grid, &power);
        let mut parts = Vec::new();
        let mut sums = Vec::new();
        for lb in &req {
            let layer = &stack.layers[lb.layer];
            let absent = match mark {
                true => crate::assemble::absent_plane(&grid, &power[lb.layer], layer.material),
                false => Vec::new(),
            };
            let sum: Vec<f64> = (0..grid.plane())
                .map(|_| (lb.z.clone()).map(|_| rng.next(300.0, 380.0)).sum())
                .collect();
            parts.push(host_block_partials(lb, &sum, &absent));
            sums.push((sum, absent));
        }
        let got = block_stats(&stack, &power, &req, &parts).unwrap();
        for (lb, (sum, absent)) in req.iter().zip(&sums) {
            let cells = lb.z.len() as f64;
            let map: Vec<f64> = (sum
                .iter()
                .zip(absent.iter().chain(std::iter::repeat(&false))))
            .map(|(&s, &a)| if a { f64::NAN } else { s / cells })
            .collect();
            let layer = &stack.layers[lb.layer].name;
            let want = layer_block_stats(layer, &map, &power[lb.layer].blocks, &grid);
            let got = got[lb.layer].as_ref().unwrap();
            assert_eq!(got.len(), want.len());
            for (b, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    (&g.layer, &g.block, g.power_w),
                    (&w.layer, &w.block, w.power_w)
                );
                let (Some(g), Some(w)) = (g.temp, w.temp) else {
                    assert_eq!(g.temp, w.temp, "{name} {layer} {}", w.block);
                    continue;
                };
                let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
                assert!(same(g.min_k, w.min_k) && same(g.max_k, w.max_k), "{w:?}");
                assert!(same(g.center_k, w.center_k), "{w:?}");
                let boxes: Vec<usize> = (lb.blocks.iter().zip(&lb.owner))
                    .filter(|(_, &o)| o == b)
                    .map(|(&[_, nc, _, nr, _], _)| nc * nr)
                    .collect();
                let n = boxes.iter().sum::<usize>() as f64;
                if w.avg_k.is_nan() {
                    nan += 1;
                    assert!(g.avg_k.is_nan());
                } else if boxes.len() == 1 && boxes[0] <= CHUNK {
                    assert_eq!(g.avg_k, w.avg_k, "{name} {layer} block {b}");
                } else {
                    // Both are sums of n positive terms in a loop (one cut
                    // into chunks or boxes): each within (n−1)·u of the
                    // exact one.
                    several += 1;
                    let rel = (g.avg_k - w.avg_k).abs() / w.avg_k;
                    let bound = 4.0 * n * f64::EPSILON / 2.0;
                    assert!(
                        rel <= bound,
                        "{name} {layer} block {b}: {rel:e} > {bound:e}"
                    );
                }
            }
        }
        assert!(got.iter().filter(|s| s.is_some()).count() == req.len());
    }
    assert!(several > 0, "blocks of several chunks");
    assert!(nan > 0, "blocks over absent cells");
}

#[test]
fn partials_of_the_wrong_shape_are_an_error() {
    let stack = load("hbm_2p5d.toml", None);
    let grid = Grid::from_stack(&stack);
    let power = rasterize_layers(&stack, &grid).unwrap();
    let req = layer_blocks(&grid, &power);
    assert!(!req.is_empty());
    assert!(block_stats(&stack, &power, &req, &[]).is_err());
    let short: Vec<Vec<BlockPartial>> = req.iter().map(|_| Vec::new()).collect();
    assert!(block_stats(&stack, &power, &req, &short).is_err());
}
