//! The parts of a steady solve that depend on where the system was
//! assembled: the offset of a device-assembled system computed
//! where it lives, and the post-solve statistics, reduced on the device
//! (`QuadDiagOps::field_partials`, the blocks' statistics included, so a
//! layer map comes down only when an output writes it) when no output
//! needs the whole field, else folded from the field as it comes down
//! (`field_stats`).

use super::block_stats_device::{block_stats, layer_blocks};
use super::field_stats::{FieldStats, FieldSummary, Piece};
use super::steady_options::{KeepField, SteadyError};
use super::summarize::{Coupling, PowerSums, ThermalProblem};
use crate::assemble::System;
use crate::linalg::Offset;
use crate::thermal::device::{DeviceAssembly, ThermalBackend, ThermalOps};

/// The system as a solve holds it after assembly: whole on the host (CPU,
/// or `CUTH_HOST_ASSEMBLY`), or on the device with its films there too.
pub(crate) enum Assembled<V> {
    Host(Box<System>),
    Device(DeviceFilms<V>),
}

/// A device assembly's coupling to ambient: the power in and the films.
pub(crate) struct DeviceFilms<V> {
    power_in_w: f64,
    g_top: V,
    g_bottom: V,
}

/// The offset of `linalg::offset` for a system assembled on the device:
/// c = Σb / Σamb from the power maps (host, one plane each) and the films
/// (summed on the device), b −= c·amb where b lives, and the two norms by
/// device reductions.
#[allow(clippy::type_complexity)]
pub(crate) fn shift_on_device<B: ThermalBackend>(
    be: &B,
    sums: &PowerSums,
    dev: DeviceAssembly<B::Matrix, B::Vector>,
) -> Result<(B::Matrix, B::Vector, Offset, DeviceFilms<B::Vector>), SteadyError> {
    let DeviceAssembly {
        a,
        rhs: mut b,
        g_top,
        g_bottom,
    } = dev;
    // Σ rhs: each layer's map once per z cell, split evenly over them.
    let power_in_w: f64 = sums.rhs_w.iter().sum();
    let amb = be.chunked_total(&g_top)? + be.chunked_total(&g_bottom)?;
    let c = if amb > 0.0 { power_in_w / amb } else { 0.0 };
    let mut s = be.scalars(2)?;
    be.dot(&b, &b, &mut s, 0)?;
    be.shift_rhs(&a, c, &mut b)?;
    be.dot(&b, &b, &mut s, 1)?;
    let v = be.read_scalars(&s)?;
    let (nb, ns) = (v[0].sqrt(), v[1].sqrt());
    let offset = Offset {
        c,
        rhs: Vec::new(),
        rtol_scale: if ns > 0.0 { nb / ns } else { 1.0 },
        b_norm: nb,
    };
    let films = DeviceFilms {
        power_in_w,
        g_top,
        g_bottom,
    };
    Ok((a, b, offset, films))
}

/// The statistics of the solution `x` (θ = x + c) and what `keep` asks for:
/// reduced on the device when it can and the whole field is not wanted,
/// else folded piece by piece as x comes down.
pub(crate) fn field_summary<B: ThermalOps>(
    be: &B,
    problem: ThermalProblem<'_>,
    sys: &Assembled<B::Vector>,
    x: &B::Vector,
    c: f64,
    keep: &KeepField,
) -> Result<FieldSummary, SteadyError> {
    let ThermalProblem { stack, grid, power } = problem;
    // The maps the outputs ask for; a host fold also keeps those of the
    // layers with blocks (their statistics read them), a device reduces
    // the blocks' statistics itself.
    let (asked, maps): (Vec<bool>, Vec<bool>) = match keep {
        KeepField::Whole => (Vec::new(), Vec::new()),
        KeepField::Maps(ls) => (0..stack.layers.len())
            .map(|l| {
                let blocks = power.get(l).is_some_and(|p| !p.blocks.is_empty());
                (ls.contains(&l), ls.contains(&l) || blocks)
            })
            .unzip(),
    };
    let whole = *keep == KeepField::Whole;
    let films: (Vec<f64>, Vec<f64>);
    let coupling = match sys {
        Assembled::Host(sys) => Coupling::from(&**sys),
        Assembled::Device(d) => {
            let lean = Coupling {
                power_in_w: d.power_in_w,
                g_top: &[],
                g_bottom: &[],
            };
            if !whole {
                let mut fold = FieldStats::new(stack, grid, power, lean, c, &asked, false);
                let mut req = fold.request();
                req.blocks = layer_blocks(grid, power).into();
                let got = be.field_partials(x, &d.g_top, &d.g_bottom, &req)?;
                if let Some(mut p) = got {
                    let blocks = block_stats(stack, power, &req.blocks, &p.blocks)?;
                    p.blocks = Vec::new();
                    drop(req);
                    fold.fold_partials(p)?;
                    let mut s = fold.finish()?;
                    s.blocks = blocks;
                    return Ok(s);
                }
            }
            // The host fold reads the films.
            films = (be.download(&d.g_top)?, be.download(&d.g_bottom)?);
            Coupling {
                power_in_w: d.power_in_w,
                g_top: &films.0,
                g_bottom: &films.1,
            }
        }
    };
    let mut fold = FieldStats::new(stack, grid, power, coupling, c, &maps, whole);
    be.download_pieces(x, &mut |first, piece| {
        fold.fold(first, Piece::Shifted(piece))
    })?;
    Ok(fold.finish()?)
}
