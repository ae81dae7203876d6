//! The compact inputs of an assembly (graded grids and packages included):
//! what a device needs to build the Quad-Diag matrix, the
//! heat capacities, the conductances to ambient and the right-hand side
//! itself, instead of receiving them whole. Per z cell its thickness and
//! layer; per layer one material or one per plane cell (kx, ky, kz, c;
//! floorplan patches mixed in as `assemble` mixes them) and its power map;
//! per column and row the in-plane widths; the film coefficients per plane
//! cell or one for all. O(nz + layers·plane) values for an n = plane·nz grid.

use crate::assemble::{film, layer_plane_materials};
use crate::grid::Grid;
use crate::power::LayerPower;
use crate::stack::{CoolingMap, Material, Stack};
use rayon::prelude::*;

/// A layer's material: one for the whole layer, or one per plane cell
/// (index `x + nx*y`), each `[kx, ky, kz, c]`.
#[derive(Clone, Debug)]
pub enum LayerContent {
    Uniform([f64; 4]),
    Plane(Vec<[f64; 4]>),
}

fn quad(m: &Material) -> [f64; 4] {
    [m.k[0], m.k[1], m.k[2], m.heat_capacity]
}

/// Everything a device assembly reads; see the module doc.
#[derive(Clone, Debug)]
pub struct AssemblyInput<'p> {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    /// Width of each column (x), m; `nx` values.
    pub dx: Vec<f64>,
    /// Width of each row (y), m; `ny` values.
    pub dy: Vec<f64>,
    /// Thickness of each z cell, m; `nz` values.
    pub dz: Vec<f64>,
    /// Layer of each z cell.
    pub layer_of_z: Vec<u32>,
    /// z cells of each layer (its power is split evenly over them).
    pub layer_cells: Vec<u32>,
    pub layers: Vec<LayerContent>,
    /// W per plane cell of each layer (`None` or empty: no power).
    pub power: Vec<Option<&'p [f64]>>,
    /// Top film coefficient, W/(m² K): one value, or one per plane cell.
    pub h_top: Vec<f64>,
    /// Bottom film coefficient likewise; `None`: adiabatic bottom.
    pub h_bottom: Option<Vec<f64>>,
}

/// One film coefficient for every plane cell (stride 0 on the device), or
/// the cooling map's per cell, exactly as the host assembly's [`film`].
fn film_values(grid: &Grid, h: f64, map: Option<&CoolingMap>) -> Vec<f64> {
    match map {
        None => vec![h],
        Some(_) => film(grid, h, map),
    }
}

/// The parts of an [`AssemblyInput`] that take time at large grids (the
/// layers' materials, which layers carry power), owned: a caller can build
/// them while the device opens and hand them to
/// [`AssemblyInput::from_parts`] with the same stack, grid and power.
#[derive(Clone, Debug)]
pub struct InputParts {
    layers: Vec<LayerContent>,
    powered: Vec<bool>,
}

impl InputParts {
    pub fn new(stack: &Stack, grid: &Grid, power: &[LayerPower]) -> InputParts {
        let layers = stack
            .layers
            .iter()
            .enumerate()
            .map(|(l, layer)| {
                match power
                    .get(l)
                    .and_then(|p| layer_plane_materials(stack, grid, p, l))
                {
                    Some(v) => LayerContent::Plane(v.iter().map(quad).collect()),
                    None => LayerContent::Uniform(quad(&layer.material)),
                }
            })
            .collect();
        // An unpowered layer's map is a plane of zeros: left out (the
        // kernels give it no power), not copied and uploaded (at 8192²
        // the eight unpowered maps of mol_f2f were 4.3 GB, 4 of the 5.2 s
        // of assembly).
        let powered = (0..stack.layers.len())
            .map(|l| {
                power.get(l).is_some_and(|p| {
                    !p.map_w.is_empty()
                        && (p.total_w != 0.0 || p.map_w.par_iter().any(|&w| w != 0.0))
                })
            })
            .collect();
        InputParts { layers, powered }
    }
}

impl<'p> AssemblyInput<'p> {
    /// The inputs of `stack` on `grid` with its rasterized `power`.
    pub fn new(stack: &Stack, grid: &Grid, power: &'p [LayerPower]) -> AssemblyInput<'p> {
        Self::from_parts(stack, grid, power, InputParts::new(stack, grid, power))
    }

    /// [`AssemblyInput::new`] from parts built before (of the same stack,
    /// grid and power; a layer count that differs is rebuilt here).
    pub fn from_parts(
        stack: &Stack,
        grid: &Grid,
        power: &'p [LayerPower],
        parts: InputParts,
    ) -> AssemblyInput<'p> {
        let n = stack.layers.len();
        let parts = match parts.layers.len() == n && parts.powered.len() == n {
            true => parts,
            false => InputParts::new(stack, grid, power),
        };
        AssemblyInput {
            nx: grid.nx,
            ny: grid.ny,
            nz: grid.nz,
            dx: grid.dx.clone(),
            dy: grid.dy.clone(),
            dz: grid.dz.clone(),
            layer_of_z: grid.layer_of_z.iter().map(|&l| l as u32).collect(),
            layer_cells: grid.layer_z.iter().map(|r| r.len() as u32).collect(),
            layers: parts.layers,
            power: (parts.powered.iter().enumerate())
                .map(|(l, &on)| power.get(l).filter(|_| on).map(|p| p.map_w.as_slice()))
                .collect(),
            h_top: film_values(grid, stack.h_top, stack.h_top_map.as_ref()),
            h_bottom: match (stack.h_bottom, &stack.h_bottom_map) {
                (_, Some(map)) => Some(film_values(grid, 0.0, Some(map))),
                (Some(h), None) => Some(vec![h]),
                (None, None) => None,
            },
        }
    }

    pub fn plane(&self) -> usize {
        self.nx * self.ny
    }

    pub fn len(&self) -> usize {
        self.plane() * self.nz
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Host bytes of these inputs (what is copied to the device).
    pub fn bytes(&self) -> u64 {
        let planes: usize = self
            .layers
            .iter()
            .map(|c| match c {
                LayerContent::Uniform(_) => 0,
                LayerContent::Plane(v) => v.len(),
            })
            .sum();
        let power: usize = self.power.iter().flatten().map(|p| p.len()).sum();
        (8 * (self.nx + self.ny + 2 * self.nz + power + self.h_top.len())
            + 32 * planes
            + 8 * self.h_bottom.as_ref().map_or(0, Vec::len)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_stack_is_compact_and_consistent() {
        let stack = Stack::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/configs/mol_f2f.toml"
        )))
        .unwrap()
        .with_grid(40, 24)
        .unwrap();
        let grid = Grid::from_stack(&stack);
        let power: Vec<LayerPower> = (0..stack.layers.len())
            .map(|l| crate::power::layer_power(&stack, &grid, l).unwrap())
            .collect();
        let inp = AssemblyInput::new(&stack, &grid, &power);
        assert_eq!(inp.len(), grid.len());
        assert!(inp.dx.len() == 40 && inp.dx.iter().all(|&d| d == grid.dx[0]));
        assert!(inp.dy.len() == 24 && inp.dy.iter().all(|&d| d == grid.dy[0]));
        assert_eq!(inp.layer_of_z.len(), grid.nz);
        let cells: u32 = inp.layer_cells.iter().sum();
        assert_eq!(cells as usize, grid.nz);
        // Far smaller than the n-sized arrays it replaces.
        assert!(inp.bytes() < 8 * grid.len() as u64);
        // Only the powered layers keep their maps, with the same total.
        for (l, p) in inp.power.iter().enumerate() {
            assert_eq!(p.is_some(), stack.layers[l].power.is_some(), "layer {l}");
        }
        let total: f64 = inp.power.iter().flatten().flat_map(|m| m.iter()).sum();
        let want: f64 = power.iter().flat_map(|p| p.map_w.iter()).sum();
        assert_eq!(total, want);
    }
}
