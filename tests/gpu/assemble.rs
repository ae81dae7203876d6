//! Device assembly against the host's `assemble`: every
//! array of the system (d, gx, gy, gz, amb, rhs, capacity, g_top, g_bottom)
//! must agree to 1e-15 relative (the kernels round every operation as the
//! host does, so in practice bit for bit). `#[ignore]`d: needs a GPU.
//!
//! cargo test --release --test gpu -- --ignored --nocapture assemble::

use crate::util as common;

use common::gpu;
use cuth::assemble::{assemble, System};
use cuth::backend::{Backend, QuadDiagOps};
use cuth::grid::Grid;
use cuth::power::{layer_power, LayerPower};
use cuth::stack::Stack;
use cuth::thermal::assembly_input::AssemblyInput;

fn load(rel: &str, nx: usize, ny: usize) -> (Stack, Grid, Vec<LayerPower>) {
    let stack = Stack::load(&common::repo_path(rel))
        .unwrap()
        .with_grid(nx, ny)
        .unwrap();
    let grid = Grid::from_stack(&stack);
    let power = (0..stack.layers.len())
        .map(|l| layer_power(&stack, &grid, l).unwrap())
        .collect();
    (stack, grid, power)
}

/// Largest relative difference, and how many values differ at all.
fn compare(what: &str, dev: &[f64], host: &[f64]) -> f64 {
    assert_eq!(dev.len(), host.len(), "{what}: lengths");
    let scale = host
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(f64::MIN_POSITIVE);
    let mut worst = 0.0f64;
    let mut differ = 0usize;
    for (d, h) in dev.iter().zip(host) {
        if d != h {
            differ += 1;
        }
        let rel = (d - h).abs() / h.abs().max(scale * 1e-300);
        worst = worst.max(if h == d { 0.0 } else { rel });
    }
    println!(
        "  {what:9} {} values, {differ} differ, max rel {worst:.2e}",
        host.len()
    );
    assert!(worst <= 1e-15, "{what}: max relative difference {worst:e}");
    worst
}

fn check(name: &str, inp: &AssemblyInput, host: &System) {
    let be = gpu();
    let sys = be.assemble_system(inp).expect("device assembly");
    let a = be.host_matrix(&sys.a).unwrap();
    println!("{name}: {}x{}x{}", a.nx, a.ny, a.nz);
    compare("d", &a.d, &host.a.d);
    compare("gx", &a.gx, &host.a.gx);
    compare("gy", &a.gy, &host.a.gy);
    compare("gz", &a.gz, &host.a.gz);
    compare("amb", &a.amb, &host.a.amb);
    compare("rhs", &be.download(&sys.rhs).unwrap(), &host.rhs);
    compare(
        "capacity",
        &be.download(sys.capacity.as_ref().expect("heat capacities"))
            .unwrap(),
        &host.capacity,
    );
    compare("g_top", &be.download(&sys.g_top).unwrap(), &host.g_top);
    compare(
        "g_bottom",
        &be.download(&sys.g_bottom).unwrap(),
        &host.g_bottom,
    );
}

#[test]
#[ignore]
fn device_assembly_equals_host_on_shipped_stacks() {
    for (rel, nx, ny) in [
        ("configs/mol_f2f.toml", 96, 64),
        ("configs/hotspot_ev6_3d.toml", 50, 70),
        ("configs/3dice_two_dies.toml", 64, 32),
        // In-plane patches: layers with one material per plane cell.
        ("tests/data/stress_mg/stress.toml", 80, 80),
    ] {
        let (stack, grid, power) = load(rel, nx, ny);
        let inp = AssemblyInput::new(&stack, &grid, &power);
        check(rel, &inp, &assemble(&stack, &grid, &power));
    }
}

#[test]
#[ignore]
fn bottom_film_and_per_cell_film_arrays() {
    let (mut stack, grid, power) = load("configs/mol_f2f.toml", 40, 24);
    stack.h_bottom = Some(750.0);
    let host = assemble(&stack, &grid, &power);
    let mut inp = AssemblyInput::new(&stack, &grid, &power);
    check("h_bottom scalar", &inp, &host);
    // The same film given per plane cell.
    inp.h_top = vec![stack.h_top; grid.plane()];
    inp.h_bottom = Some(vec![750.0; grid.plane()]);
    check("h per cell", &inp, &host);
}

#[test]
#[ignore]
fn bad_lengths_are_errors() {
    let (stack, grid, power) = load("configs/mol_f2f.toml", 16, 16);
    let mut inp = AssemblyInput::new(&stack, &grid, &power);
    inp.h_top = vec![1.0; 7];
    assert!(gpu().assemble_system(&inp).is_err());
    let mut inp = AssemblyInput::new(&stack, &grid, &power);
    inp.dx.pop();
    assert!(gpu().assemble_system(&inp).is_err());
}

/// Large downloads go through pinned staging buffers in chunks
/// (`backend::cuda::transfer`): every value arrives, at every chunk
/// boundary and in the short last chunk.
#[test]
#[ignore]
fn staged_download_is_exact() {
    let be = gpu();
    let n = 2 * be.stage_values() + 12_345;
    let host: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 - 7.0).collect();
    let v = be.upload(&host).unwrap();
    let t = std::time::Instant::now();
    let back = be.download(&v).unwrap();
    let s = t.elapsed().as_secs_f64();
    println!(
        "download of {n} f64: {s:.3} s, {:.1} GB/s",
        8.0 * n as f64 / s / 1e9
    );
    assert!(back == host, "staged download differs");
    let mut into = vec![1.0; n];
    be.download_into(&v, &mut into).unwrap();
    assert!(into == host, "staged download_into differs");
}

/// Large power maps go up through the pinned staging buffers in pieces
/// (`backend::cuda::transfer::upload_staged`): two maps of 2100² values
/// (more than one staging buffer each, so pieces end inside a map and at
/// its end) with a distinct value in every cell, the device's right-hand
/// side against the host assembly's.
#[test]
#[ignore]
fn staged_upload_of_the_power_maps_is_exact() {
    let toml = "[chip]\nwidth = 0.01\nlength = 0.01\n[grid]\nnx = 8\nny = 8\n\
        [boundary]\nambient = 300.0\nh_top = 1000.0\n\
        [materials.si]\nk = 130.0\nheat_capacity = 1.6e6\n\
        [[layers]]\nname = \"a\"\nmaterial = \"si\"\nthickness = 1e-5\n\
        power = { type = \"uniform\", total = 1.0 }\n\
        [[layers]]\nname = \"mid\"\nmaterial = \"si\"\nthickness = 1e-5\n\
        [[layers]]\nname = \"b\"\nmaterial = \"si\"\nthickness = 2e-5\ncells = 2\n\
        power = { type = \"uniform\", total = 2.0 }\n";
    let stack = common::stack(toml).with_grid(2100, 2100).unwrap();
    let grid = Grid::from_stack(&stack);
    let mut power: Vec<LayerPower> = (0..stack.layers.len())
        .map(|l| layer_power(&stack, &grid, l).unwrap())
        .collect();
    let plane = grid.plane();
    assert!(plane > gpu().stage_values());
    for (l, p) in power.iter_mut().enumerate() {
        if p.total_w != 0.0 {
            p.map_w = (0..plane).map(|j| (j + l * plane) as f64 * 1e-9).collect();
        }
    }
    let host = assemble(&stack, &grid, &power);
    let be = gpu();
    // The buffers a run that writes maps pins at start-up.
    be.reserve_staging(plane).unwrap();
    let inp = AssemblyInput::new(&stack, &grid, &power);
    let t = std::time::Instant::now();
    let sys = be.assemble_steady(&inp).expect("device assembly");
    be.synchronize().unwrap();
    println!(
        "staged upload + assembly of {} cells: {:.3} s",
        grid.len(),
        t.elapsed().as_secs_f64()
    );
    let rhs = be.download(&sys.rhs).unwrap();
    assert!(rhs == host.rhs, "staged power maps differ");
}
