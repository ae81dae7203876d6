//! [`NonlinearOps`] on the CPU: the host path of the k(T) outer iteration.
//! A(T) is assembled from `assemble::cell_materials` (each cell's laws at its
//! own temperature), the leakage by `LeakageModel::eval`, the shift by
//! `linalg::Offset`, the reductions as plain sequential loops, so that the
//! loop's results are those of the host implementation it replaced.

use super::{CpuBackend, CHUNK};
use crate::assemble::{assemble, assemble_cells, cell_materials, System};
use crate::backend::nonlinear::{hottest_of, NlContext, NlRhs, NonlinearOps, Range};
use crate::backend::BackendError;
use crate::linalg::Offset;
use rayon::prelude::*;

/// The dynamic power and the ambient temperature.
pub struct CpuPhysics {
    dynamic: Option<Vec<f64>>,
    ambient_k: f64,
}

fn absolute(theta: &[f64], ambient_k: f64) -> Vec<f64> {
    theta.iter().map(|v| v + ambient_k).collect()
}

impl NonlinearOps for CpuBackend {
    type Physics = CpuPhysics;
    type NlSystem = System;
    type AsmKept = ();

    fn nl_physics(
        &self,
        cx: &NlContext,
        dynamic: Option<&[f64]>,
    ) -> Result<CpuPhysics, BackendError> {
        Ok(CpuPhysics {
            dynamic: dynamic.map(<[f64]>::to_vec),
            ambient_k: cx.stack.ambient_k,
        })
    }

    fn nl_assemble(
        &self,
        cx: &NlContext,
        ph: &mut CpuPhysics,
        theta: &Vec<f64>,
    ) -> Result<Result<System, usize>, BackendError> {
        let sys = if cx.stack.k_varies() {
            let t = absolute(theta, ph.ambient_k);
            match cell_materials(cx.stack, cx.grid, cx.power, &t) {
                Ok(cells) => assemble_cells(cx.stack, cx.grid, cx.power, &cells),
                Err(i) => return Ok(Err(i)),
            }
        } else {
            assemble(cx.stack, cx.grid, cx.power)
        };
        if ph.dynamic.is_none() {
            ph.dynamic = Some(sys.rhs.clone());
        }
        Ok(Ok(sys))
    }

    fn nl_matrix<'s>(&self, sys: &'s System) -> &'s crate::matrix::QuadDiag {
        &sys.a
    }

    fn nl_rhs(
        &self,
        cx: &NlContext,
        ph: &mut CpuPhysics,
        sys: &mut System,
        theta: &Vec<f64>,
    ) -> Result<NlRhs<Vec<f64>>, BackendError> {
        let dynamic = ph.dynamic.as_ref().ok_or(BackendError::Unsupported(
            "nl_rhs before the first nl_assemble",
        ))?;
        let lk = cx.leak.eval(cx.grid, &absolute(theta, ph.ambient_k));
        sys.rhs = dynamic.iter().zip(&lk.cell_w).map(|(p, q)| p + q).collect();
        let mut offset = Offset::new(&sys.a, &sys.rhs);
        let b = std::mem::take(&mut offset.rhs);
        Ok(NlRhs {
            b,
            offset,
            power_in_w: sys.rhs.iter().sum(),
            leakage_w: lk.per_source_w,
        })
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
        let t = absolute(theta, ph.ambient_k);
        Ok(cx.leak.eval(cx.grid, &t).total_w())
    }

    fn nl_coupling(&self, sys: &System) -> Result<(Vec<f64>, Vec<f64>), BackendError> {
        Ok((sys.g_top.clone(), sys.g_bottom.clone()))
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
                super::same_len(x.len(), y.len())?;
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
        super::same_len(x.len(), y.len())?;
        Ok(x.iter().zip(y).map(|(a, b)| a * b).sum())
    }

    fn nl_change(&self, x: &Vec<f64>, y: &Vec<f64>, s: f64) -> Result<f64, BackendError> {
        super::same_len(x.len(), y.len())?;
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
