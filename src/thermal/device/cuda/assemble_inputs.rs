//! The compact inputs of a device assembly as `kernels/assemble.cu` reads
//! them: per layer its uniform material and offsets into the
//! material planes and power maps, and those planes and maps copied to the
//! device one after another straight from where they are on the host (no
//! concatenated host copy: at 2048² that concatenation took 52 ms of a
//! 0.55 s run), large ones through the pinned staging buffers
//! (`transfer.rs`).

use crate::backend::cuda::launch::driver_err;
use crate::backend::cuda::CudaBackend;
use crate::backend::BackendError;
use crate::thermal::assembly_input::{AssemblyInput, LayerContent};
use cudarc::driver::CudaSlice;

/// The inputs as the kernels read them: per layer its uniform material
/// and offsets into the planes and power maps, which stay where they are on
/// the host (copied to the device one after another, no host copy: at
/// 2048² the concatenation took 52 ms of a 0.55 s run).
pub(super) struct Flat<'i> {
    pub(super) uniform: Vec<f64>,
    pub(super) plane_off: Vec<i64>,
    pub(super) planes: Vec<&'i [f64]>,
    pub(super) power_off: Vec<i64>,
    pub(super) power: Vec<&'i [f64]>,
}

pub(super) fn flatten<'i>(inp: &'i AssemblyInput) -> Result<Flat<'i>, BackendError> {
    let plane = inp.plane();
    let mut f = Flat {
        uniform: Vec::with_capacity(4 * inp.layers.len()),
        plane_off: Vec::with_capacity(inp.layers.len()),
        planes: Vec::new(),
        power_off: Vec::with_capacity(inp.layers.len()),
        power: Vec::new(),
    };
    let (mut planes, mut power) = (0, 0);
    for c in &inp.layers {
        match c {
            LayerContent::Uniform(m) => {
                f.uniform.extend_from_slice(m);
                f.plane_off.push(-1);
            }
            LayerContent::Plane(v) => {
                if v.len() != plane {
                    return Err(BackendError::Length(v.len(), plane));
                }
                f.uniform.extend_from_slice(&[0.0; 4]);
                f.plane_off.push(planes as i64);
                planes += v.len();
                f.planes.push(v.as_flattened());
            }
        }
    }
    for p in &inp.power {
        match p {
            Some(map) if !map.is_empty() => {
                if map.len() != plane {
                    return Err(BackendError::Length(map.len(), plane));
                }
                f.power_off.push(power as i64);
                power += map.len();
                f.power.push(map);
            }
            _ => f.power_off.push(-1),
        }
    }
    Ok(f)
}

/// A film coefficient array and its stride (0: one value for the face).
pub(super) fn film(h: &[f64], plane: usize) -> Result<i64, BackendError> {
    match h.len() {
        1 => Ok(0),
        n if n == plane => Ok(1),
        n => Err(BackendError::Length(n, plane)),
    }
}

impl CudaBackend {
    /// `parts` one after another in one device buffer (of at least one
    /// value: cudarc cannot copy an empty slice), without a host copy of
    /// them all: large ones through the pinned staging buffers
    /// (`upload_staged`), else straight from pageable memory.
    pub(crate) fn htod_concat(
        &self,
        parts: &[&[f64]],
        what: &str,
    ) -> Result<CudaSlice<f64>, BackendError> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let mut d = self.zeros_f64(total, what)?;
        let staged = total > 0
            && (self.upload_staged(parts, &mut d)).map_err(|e| match e {
                BackendError::Driver(m) => BackendError::Driver(format!("uploading {what}: {m}")),
                e => e,
            })?;
        if staged {
            return Ok(d);
        }
        let mut at = 0;
        for p in parts {
            let mut view = d.slice_mut(at..at + p.len());
            self.stream()
                .memcpy_htod(*p, &mut view)
                .map_err(|e| driver_err(&format!("uploading {what}"), e))?;
            at += p.len();
        }
        Ok(d)
    }
}
