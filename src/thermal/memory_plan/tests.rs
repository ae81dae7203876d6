//! The memory plan's figures against the arrays a run allocates.

use super::*;

fn shape(nx: usize, executor: Executor, precond: PrecondKind) -> RunShape<'static> {
    RunShape {
        nx,
        ny: nx,
        nz: 10,
        layers: 10,
        powered_layers: 2,
        patched_layers: 0,
        wx: &[],
        wy: &[],
        executor,
        host_assembly: false,
        precond,
        precision: PrecisionMode::Mixed,
        mg_precision: crate::linalg::mg::MgPrecision::F64,
        outputs: OutputShape {
            map_layers: 10,
            ..Default::default()
        },
    }
}

#[test]
fn device_bytes_per_cell_as_documented() {
    // Chebyshev in f64 on a GPU: matrix 5 + vectors 6 + recurrence 3 = 14 f64.
    let mut s = shape(1024, Executor::Cuda, PrecondKind::Chebyshev);
    s.precision = PrecisionMode::F64;
    let p = plan(&s, None, None);
    let d = p.device.unwrap();
    let n = (1024 * 1024 * 10) as u64;
    assert_eq!(d.items[..3].iter().map(|i| i.1).sum::<u64>(), 112 * n);
    // The multigrid hierarchy adds about a third of the fine matrix.
    let mg = plan(
        &shape(1024, Executor::Cuda, PrecondKind::Multigrid),
        None,
        None,
    );
    let pre = mg.device.unwrap().items[2].1;
    assert!(
        pre > 8 * n + 64 * n / 4 && pre < 8 * n + 64 * n / 3 + (9 << 20),
        "{pre}"
    );
}

#[test]
fn cuda_multigrid_keeps_the_field_off_the_host() {
    // 8192² × 18: a host copy of A alone would be 48 GB, the field 9.7 GB.
    let mut s = shape(8192, Executor::Cuda, PrecondKind::Multigrid);
    s.nz = 18;
    s.outputs = OutputShape::default();
    let p = plan(&s, None, None);
    let field = 8 * 8192u64 * 8192 * 18;
    assert!(!p.host.items.iter().any(|i| i.0.contains("matrix copy")));
    // Without --npy/--vtk/--save-state nothing field-sized stays on the
    // host: the statistics are folded as the field comes down.
    // (The power maps are planes, one a layer: 10 of 18 z cells here.)
    let big: Vec<_> = (p.host.items.iter())
        .filter(|i| i.1 >= field / 4 && i.0 != "power maps")
        .collect();
    assert!(big.is_empty(), "{big:?}");
    // Power maps (10 planes of 0.5 GiB), assembly inputs (2 powered maps,
    // 2 film planes), staging and the overhead: 7.8 GiB, under one field.
    assert!(p.host.total_bytes < field, "{}", p.host.total_bytes);
    let pre = p.host.items.iter().find(|i| i.0 == "preconditioner set-up");
    assert!(pre.unwrap().1 < 64 << 20, "{pre:?}");
    // --npy keeps the whole field (8 B a cell, once).
    let npy = OutputShape {
        npy_bytes: Some(4),
        ..Default::default()
    };
    let p = plan(&RunShape { outputs: npy, ..s }, None, None);
    let big: Vec<_> = (p.host.items.iter())
        .filter(|i| i.1 >= field / 4 && i.0 != "power maps")
        .collect();
    assert_eq!(big.len(), 1, "{big:?}");
    assert_eq!(big[0].1, field);
    // Chebyshev still downloads A for its set-up.
    let cheb = plan(
        &RunShape {
            precond: PrecondKind::Chebyshev,
            ..s
        },
        None,
        None,
    );
    assert!(cheb.host.items.iter().any(|i| i.0.contains("matrix copy")));
}

#[test]
fn graded_hierarchy_is_sized_as_built() {
    // A die of narrow columns in a package of wide ones: the graded plan
    // merges the wide cells late, so its levels hold more cells than
    // halving would, and the plan counts them.
    let wx: Vec<f64> = (0..400)
        .map(|i| if (150..250).contains(&i) { 1e-5 } else { 2e-4 })
        .collect();
    let wy = wx.clone();
    let mut s = shape(400, Executor::Cuda, PrecondKind::Multigrid);
    let halving = plan(&s, None, None).device.unwrap().items[2].1;
    s.wx = &wx;
    s.wy = &wy;
    let graded = plan(&s, None, None).device.unwrap().items[2].1;
    // The levels as the hierarchy builds them.
    let steps = crate::linalg::mg::hierarchy::plan_graded(&wx, &wy, s.nz);
    let cells: u64 = (steps.iter().rev().skip(1))
        .map(|c| (c.nxc * c.nyc * s.nz) as u64)
        .sum();
    let last = steps.last().map(|c| (c.nxc * c.nyc * s.nz) as u64).unwrap();
    // A level's amb lives until the next one is built: the two largest's
    // at the peak of the set-up.
    let first_two: u64 = (steps[..steps.len() - 1].iter().take(2))
        .map(|c| (c.nxc * c.nyc * s.nz) as u64)
        .sum();
    let n = (400 * 400 * s.nz) as u64;
    assert_eq!(
        graded,
        8 * n + 56 * cells + 8 * first_two + 16 * last + 8 * last * last
    );
    assert!(graded > halving, "{graded} vs {halving}");
}

#[test]
fn largest_grid_is_the_boundary() {
    let s = shape(4096, Executor::Cpu, PrecondKind::Multigrid);
    let limit = 2u64 << 30;
    let err = check(&s, Some(limit), None).unwrap_err();
    let (x, y) = err.largest.unwrap();
    assert_eq!(x, y);
    assert!(
        err.message.contains(&format!("--grid {x}x{y}")),
        "{}",
        err.message
    );
    let at = |nx| plan(&RunShape { nx, ny: nx, ..s }, Some(limit), None).fits();
    assert!(at(x) && !at(x + 1));
    // Far too little memory for any grid.
    let none = check(&s, Some(1 << 20), None).unwrap_err();
    assert!(none.largest.is_none() && none.message.contains("no grid fits"));
}

#[test]
fn device_limit_refuses_on_the_device_only() {
    let s = shape(2048, Executor::Cuda, PrecondKind::Multigrid);
    let err = check(&s, Some(u64::MAX), Some(1 << 30)).unwrap_err();
    assert!(err.message.contains("device memory") && !err.message.contains("host memory"));
    assert!(check(&s, Some(u64::MAX), Some(u64::MAX)).is_ok());
}

#[test]
fn cap_takes_the_smaller() {
    assert_eq!(capped(Some(10), None), Some(10));
    assert_eq!(capped(None, None), None);
    assert_eq!(capped(Some(10), Some(4)), Some(4));
    assert_eq!(capped(None, Some(4)), Some(4));
}

#[test]
fn auto_multigrid_never_holds_both_hierarchies() {
    // `auto` frees its f32 hierarchy before it builds the f64 one, so its
    // plan is the f32 plan, and each is below the two together.
    let mut s = shape(2048, Executor::Cuda, PrecondKind::Multigrid);
    s.nz = 18;
    let pre = |p: crate::linalg::mg::MgPrecision| {
        let d = plan(
            &RunShape {
                mg_precision: p,
                ..s
            },
            None,
            None,
        )
        .device
        .unwrap();
        d.items[2].1
    };
    use crate::linalg::mg::MgPrecision::{Auto, F32, F64};
    let n = (2048 * 2048 * 18) as u64;
    println!(
        "hierarchy bytes per cell: f64 {:.1}, f32 {:.1}, auto {:.1}",
        pre(F64) as f64 / n as f64,
        pre(F32) as f64 / n as f64,
        pre(Auto) as f64 / n as f64
    );
    assert_eq!(pre(Auto), pre(F32));
    assert!(pre(Auto) < pre(F32) + pre(F64) - 8 * n);
}
