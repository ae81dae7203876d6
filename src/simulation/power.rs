//! The power a session has set: the stack's own maps, the blocks set since
//! (through the same [`BlockDrive`] as a transient trace's columns), and
//! layers whose whole map was set.

use super::SimulationError;
use crate::grid::Grid;
use crate::power::drive::{drivable, BlockDrive};
use crate::power::LayerPower;
use crate::stack::Stack;
use std::collections::HashMap;

pub(super) struct SetPower {
    /// The stack's own power per layer.
    base: Vec<LayerPower>,
    /// Per block name, the layers holding a block of that name.
    layers_of: HashMap<String, Vec<usize>>,
    /// Every block set so far, and its power now (W): the drive's columns.
    names: Vec<String>,
    column: HashMap<String, usize>,
    values: Vec<f64>,
    drive: BlockDrive,
    /// Per layer, a map set whole (W per plane cell), which wins over its
    /// blocks until one of them is set again.
    maps: Vec<Option<Vec<f64>>>,
    /// Per layer its map now (W per plane cell): the stack's, re-rasterized
    /// where blocks were set, or the map set whole. A change re-forms only
    /// the layers it touches.
    current: Vec<Vec<f64>>,
}

/// `layer`'s index in `stack`.
pub(super) fn layer_index(stack: &Stack, layer: &str) -> Result<usize, SimulationError> {
    (stack.layers.iter().position(|l| l.name == layer)).ok_or_else(|| {
        let known: Vec<&str> = stack.layers.iter().map(|l| l.name.as_str()).collect();
        SimulationError::invalid(
            format!("layer `{layer}`"),
            format!("the stack has no such layer (layers: {})", known.join(", ")),
        )
    })
}

/// A power must be a finite number of W, at least 0.
fn check_watts(field: impl Fn() -> String, w: f64) -> Result<(), SimulationError> {
    match w.is_finite() && w >= 0.0 {
        true => Ok(()),
        false => Err(SimulationError::invalid(
            field(),
            format!("power must be a finite number of W, at least 0, got {w}"),
        )),
    }
}

impl SetPower {
    pub(super) fn new(stack: &Stack, base: Vec<LayerPower>) -> SetPower {
        let mut layers_of: HashMap<String, Vec<usize>> = HashMap::new();
        for (l, lp) in base.iter().enumerate() {
            for b in &lp.blocks {
                let v = layers_of.entry(b.name.clone()).or_default();
                if v.last() != Some(&l) {
                    v.push(l);
                }
            }
        }
        SetPower {
            maps: vec![None; stack.layers.len()],
            current: base.iter().map(|p| p.map_w.clone()).collect(),
            layers_of,
            column: HashMap::new(),
            base,
            names: Vec::new(),
            values: Vec::new(),
            drive: BlockDrive::none(),
        }
    }

    /// Sets `powers`; `self` is changed only if every one is valid.
    /// Returns the layers whose map changed.
    pub(super) fn with_blocks(
        &mut self,
        stack: &Stack,
        grid: &Grid,
        powers: &[(&str, f64)],
    ) -> Result<Vec<usize>, SimulationError> {
        for &(name, w) in powers {
            let field = || format!("block `{name}`");
            check_watts(field, w)?;
            let layers = self.layers_of.get(name).map_or(&[][..], Vec::as_slice);
            if layers.is_empty() {
                return Err(SimulationError::invalid(
                    field(),
                    "no layer has a block of that name (floorplan unit or inline block)",
                ));
            }
            if let Some(&l) = layers.iter().find(|&&l| !drivable(stack, l)) {
                return Err(SimulationError::invalid(
                    field(),
                    format!(
                        "layer `{}` takes its power from a map, not from its blocks, so its \
                         blocks' powers cannot be set (set the layer's map instead)",
                        stack.layers[l].name
                    ),
                ));
            }
        }
        let fresh = powers.iter().any(|(n, _)| !self.column.contains_key(*n));
        let mut changed: Vec<usize> = Vec::new();
        for &(name, w) in powers {
            match self.column.get(name) {
                Some(&c) => self.values[c] = w,
                None => {
                    self.column.insert(name.to_string(), self.names.len());
                    self.names.push(name.to_string());
                    self.values.push(w);
                }
            }
            for &l in &self.layers_of[name] {
                self.maps[l] = None;
                if !changed.contains(&l) {
                    changed.push(l);
                }
            }
        }
        if fresh {
            self.drive = BlockDrive::new(stack, grid, &self.base, &self.names);
        }
        for &l in &changed {
            let driven = (self.drive).apply_layer(l, &mut self.current[l], &self.values);
            debug_assert!(driven, "a layer of a set block is driven");
        }
        Ok(changed)
    }

    /// Sets layer `layer`'s map to `map_w`; `self` is changed only if the
    /// map is valid. Returns the layer.
    pub(super) fn with_layer_map(
        &mut self,
        stack: &Stack,
        grid: &Grid,
        layer: &str,
        map_w: Vec<f64>,
    ) -> Result<usize, SimulationError> {
        let l = layer_index(stack, layer)?;
        let field = || format!("layer `{layer}` map");
        if map_w.len() != grid.plane() {
            return Err(SimulationError::invalid(
                field(),
                format!(
                    "has {} values, the grid's plane {} ({} × {})",
                    map_w.len(),
                    grid.plane(),
                    grid.nx,
                    grid.ny
                ),
            ));
        }
        if let Some((i, &w)) = map_w
            .iter()
            .enumerate()
            .find(|(_, w)| !(w.is_finite() && **w >= 0.0))
        {
            check_watts(|| format!("{}, cell {i}", field()), w)?;
        }
        let material = stack.layers[l].material;
        if let Some(i) = crate::assemble::powered_absent(grid, &self.base[l], material, &map_w) {
            return Err(SimulationError::invalid(
                field(),
                format!(
                    "cell {i} (x {}, y {}) has {} W but no material (outside the layer's \
                     outline or in a `none` region): its power would be lost",
                    i % grid.nx,
                    i / grid.nx,
                    map_w[i]
                ),
            ));
        }
        self.current[l].clone_from(&map_w);
        self.maps[l] = Some(map_w);
        Ok(l)
    }

    /// Layer `l`'s map now (W per plane cell).
    pub(super) fn layer_map(&self, l: usize) -> &[f64] {
        &self.current[l]
    }

    /// Per layer its map and blocks with the powers now set, as a steady
    /// driver takes them (`thermal::steady::Prepared`).
    pub(super) fn layer_power_with_maps(&self) -> Vec<LayerPower> {
        let mut out = self.layer_power();
        for (p, (map, base)) in out
            .iter_mut()
            .zip(self.current.iter().cloned().zip(&self.base))
        {
            p.total_w = map.iter().sum();
            p.map_w = map;
            p.patches.clone_from(&base.patches);
            p.outline.clone_from(&base.outline);
        }
        out
    }

    /// The layers' blocks with the powers now set (maps are not needed).
    pub(super) fn layer_power(&self) -> Vec<LayerPower> {
        let mut out: Vec<LayerPower> = (self.base.iter())
            .map(|p| LayerPower {
                map_w: Vec::new(),
                total_w: p.total_w,
                blocks: p.blocks.clone(),
                patches: Vec::new(),
                outline: None,
            })
            .collect();
        self.drive.apply_blocks(&mut out, &self.values);
        out
    }

    /// Layer `l`'s map was set whole (its blocks' powers are not known).
    pub(super) fn has_map(&self, l: usize) -> bool {
        self.maps[l].is_some()
    }
}
