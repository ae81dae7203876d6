//! [`NonlinearOps`] on the CPU: the host path of the k(T) outer iteration
//! and of the temperature-dependent transient step. A(T) (and C(T)) is
//! assembled from `assemble::cell_materials` (each cell's laws at its own
//! temperature), the leakage by `LeakageModel::eval_into`, the shift by
//! `linalg::Offset`, the reductions as plain sequential loops, so that the
//! loop's results are those of the host implementation it replaced. The
//! temperature and leakage scratch arrays are kept in [`CpuPhysics`]; a
//! re-assembly writes into the arrays of the last `System`
//! (`assemble_cells_into`, as the CUDA path's `assemble_into`).

use crate::assemble::{assemble_cells_into, assemble_into, cell_materials, System};
use crate::backend::cpu::{CpuBackend, CHUNK};
use crate::backend::BackendError;
use crate::linalg::Offset;
use crate::matrix::QuadDiag;
use crate::thermal::device::nonlinear::{hottest_of, NlContext, NlPower, NonlinearOps, Range};
use rayon::prelude::*;

/// The dynamic power, the ambient temperature and the scratch arrays of
/// the leakage (T, K; the leakage per cell, W), kept across iterations.
pub struct CpuPhysics {
    dynamic: Option<Vec<f64>>,
    ambient_k: f64,
    t: Vec<f64>,
    cell_w: Vec<f64>,
}

impl CpuPhysics {
    /// T = θ + ambient into the kept scratch.
    fn absolute(&mut self, theta: &[f64]) -> &[f64] {
        self.t.clear();
        self.t.extend(theta.iter().map(|v| v + self.ambient_k));
        &self.t
    }
}

/// The system of `cx` at T = ambient + `theta`, into the arrays of `sys`
/// (allocated when it has none yet); `sys` unchanged on `Err(i)`, a law not
/// positive at cell i.
fn system_at(
    cx: &NlContext,
    ph: &mut CpuPhysics,
    theta: &[f64],
    sys: &mut System,
) -> Result<(), usize> {
    if !cx.laws_vary() {
        assemble_into(cx.stack, cx.grid, cx.power, sys);
        return Ok(());
    }
    let t = ph.absolute(theta);
    let cells = cell_materials(cx.stack, cx.grid, cx.power, t)?;
    assemble_cells_into(cx.stack, cx.grid, cx.power, &cells, sys);
    Ok(())
}

impl NonlinearOps for CpuBackend {
    type Physics = CpuPhysics;
    type NlSystem = System;
    type AsmKept = ();

    fn tr_set_dynamic(&self, ph: &mut CpuPhysics, p: &Vec<f64>) -> Result<(), BackendError> {
        match &mut ph.dynamic {
            Some(d) => d.clone_from(p),
            None => ph.dynamic = Some(p.clone()),
        }
        Ok(())
    }

    fn tr_parts<'s>(
        &self,
        sys: &'s mut System,
    ) -> Result<(&'s mut QuadDiag, &'s Vec<f64>), BackendError> {
        Ok((&mut sys.a, &sys.capacity))
    }

    fn tr_shift(
        &self,
        a: &mut QuadDiag,
        w: &Vec<f64>,
        amb: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        crate::backend::cpu::same_len(a.len(), w.len())?;
        amb.clone_from(&a.amb);
        for ((d, e), wi) in a.d.iter_mut().zip(&mut a.amb).zip(w) {
            *d += wi;
            *e += wi;
        }
        Ok(())
    }

    fn nl_physics(
        &self,
        cx: &NlContext,
        dynamic: Option<&[f64]>,
    ) -> Result<CpuPhysics, BackendError> {
        Ok(CpuPhysics {
            dynamic: dynamic.map(<[f64]>::to_vec),
            ambient_k: cx.stack.ambient_k,
            t: Vec::new(),
            cell_w: Vec::new(),
        })
    }

    fn nl_assemble(
        &self,
        cx: &NlContext,
        ph: &mut CpuPhysics,
        theta: &Vec<f64>,
    ) -> Result<Result<System, usize>, BackendError> {
        let mut sys = System::empty();
        if let Err(i) = system_at(cx, ph, theta, &mut sys) {
            return Ok(Err(i));
        }
        if ph.dynamic.is_none() {
            ph.dynamic = Some(sys.rhs.clone());
        }
        Ok(Ok(sys))
    }

    fn nl_reassemble(
        &self,
        cx: &NlContext,
        ph: &mut CpuPhysics,
        theta: &Vec<f64>,
        sys: &mut System,
    ) -> Result<Result<(), usize>, BackendError> {
        Ok(system_at(cx, ph, theta, sys))
    }

    fn nl_matrix<'s>(&self, sys: &'s System) -> &'s QuadDiag {
        &sys.a
    }

    fn nl_rhs_mut<'s>(&self, sys: &'s mut System) -> &'s mut Vec<f64> {
        &mut sys.rhs
    }

    fn nl_power(
        &self,
        cx: &NlContext,
        ph: &mut CpuPhysics,
        theta: &Vec<f64>,
        out: &mut Vec<f64>,
    ) -> Result<NlPower, BackendError> {
        if ph.dynamic.is_none() {
            return Err(BackendError::Unsupported(
                "nl_power before the first nl_assemble",
            ));
        }
        ph.absolute(theta);
        let mut cell_w = std::mem::take(&mut ph.cell_w);
        let leakage_w = cx.leak.eval_into(cx.grid, &ph.t, &mut cell_w);
        let dynamic = ph.dynamic.as_ref().expect("checked");
        out.clear();
        out.extend(dynamic.iter().zip(&cell_w).map(|(p, q)| p + q));
        ph.cell_w = cell_w;
        Ok(NlPower {
            power_in_w: out.iter().sum(),
            leakage_w,
        })
    }

    fn nl_shifted_rhs(
        &self,
        sys: &System,
        _power_in_w: f64,
        b: &mut Vec<f64>,
    ) -> Result<Offset, BackendError> {
        let mut offset = Offset::new(&sys.a, &sys.rhs);
        *b = std::mem::take(&mut offset.rhs);
        Ok(offset)
    }

    fn nl_energy(
        &self,
        cx: &NlContext,
        sys: &System,
        theta: &Vec<f64>,
        _power_in_w: f64,
    ) -> Result<f64, BackendError> {
        Ok(crate::thermal::steady::energy_balance(cx.grid, sys, theta).relative_error)
    }

    fn nl_leakage_total(
        &self,
        cx: &NlContext,
        ph: &mut CpuPhysics,
        theta: &Vec<f64>,
    ) -> Result<f64, BackendError> {
        let t = ph.absolute(theta);
        Ok(cx.leak.eval(cx.grid, t).total_w())
    }

    fn nl_coupling(
        &self,
        sys: &System,
        top: &mut Vec<f64>,
        bottom: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        top.clone_from(&sys.g_top);
        bottom.clone_from(&sys.g_bottom);
        Ok(())
    }

    fn nl_axpby(
        &self,
        x: Option<&Vec<f64>>,
        alpha: f64,
        beta: f64,
        y: &mut Vec<f64>,
        gamma: f64,
    ) -> Result<(), BackendError> {
        let x = match (x, alpha != 0.0) {
            (Some(x), true) => {
                crate::backend::cpu::same_len(x.len(), y.len())?;
                Some(x)
            }
            (None, true) => return Err(BackendError::Unsupported("nl_axpby: α ≠ 0 without x")),
            _ => None,
        };
        y.par_chunks_mut(CHUNK).enumerate().for_each(|(c, ys)| {
            for (k, yi) in ys.iter_mut().enumerate() {
                let mut v = None;
                if let Some(x) = x {
                    v = Some(alpha * x[c * CHUNK + k]);
                }
                if beta != 0.0 {
                    let t = beta * *yi;
                    v = Some(v.map_or(t, |v| v + t));
                }
                if gamma != 0.0 {
                    v = Some(v.map_or(gamma, |v| v + gamma));
                }
                *yi = v.unwrap_or(0.0);
            }
        });
        Ok(())
    }

    fn nl_dot(&self, x: &Vec<f64>, y: &Vec<f64>) -> Result<f64, BackendError> {
        crate::backend::cpu::same_len(x.len(), y.len())?;
        Ok(x.iter().zip(y).map(|(a, b)| a * b).sum())
    }

    fn nl_change(&self, x: &Vec<f64>, y: &Vec<f64>, s: f64) -> Result<f64, BackendError> {
        crate::backend::cpu::same_len(x.len(), y.len())?;
        Ok(x.iter()
            .zip(y)
            .map(|(a, b)| ((a + s) - (b + s)).abs())
            .fold(0.0, f64::max))
    }

    fn nl_hottest(&self, x: &Vec<f64>, s: f64) -> Result<(usize, f64), BackendError> {
        Ok(hottest_of(x.iter().map(|v| v + s)))
    }

    fn nl_range(&self, x: &Vec<f64>) -> Result<Range, BackendError> {
        Ok(Range {
            min: x.iter().copied().fold(f64::INFINITY, f64::min),
            max: x.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            finite: x.iter().all(|v| v.is_finite()),
        })
    }

    fn nl_value(&self, x: &Vec<f64>, i: usize) -> Result<f64, BackendError> {
        x.get(i).copied().ok_or(BackendError::Length(i, x.len()))
    }
}
