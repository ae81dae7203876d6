//! The design-field half of the SIMP loop (a capability trait, beside
//! [`ElasticBackend`]): density filter, projection, moduli, sensitivities,
//! the OC trial designs and the reductions the loop needs, on the device
//! that holds the elastic operator. Every field (x, ρ̃, ρ̄, slopes,
//! gradients) is a `B::Vector` of one value per element and stays there;
//! what crosses to the host per iteration is a handful of scalar slots
//! (`B::Scalars`): volume, grayness, compliance, the OC volume of each trial
//! multiplier and the design change. [`super::optimize`] and
//! [`super::evaluate`] are written once over this trait.
//!
//! The CPU backend implements it with the host code of [`super::filter`],
//! [`super::projection`] and [`super::oc`] (rayon, deterministic chunked
//! sums), unchanged from before the loop moved to the device; the CUDA one
//! with `kernels/topopt_design.cu` (`super::cuda::design`).

use super::backend::ElasticBackend;
use super::cpu::CpuElastic;
use super::filter::DensityFilter;
use super::mesh::Mesh;
use super::oc;
use super::problem::{Passive, E0, E_MIN};
use super::projection;
use crate::backend::cpu::CpuBackend;
use crate::backend::{Backend, BackendError};
use rayon::prelude::*;

/// rᵖ; continuation uses whole p, where `powi` is several times faster.
pub fn power(r: f64, p: f64) -> f64 {
    if p.fract() == 0.0 && p.abs() < 64.0 {
        r.powi(p as i32)
    } else {
        r.powf(p)
    }
}

/// The per-element fields of one evaluation, where the backend keeps them.
pub struct Fields<V> {
    /// ρ̃ = F x.
    pub filtered: V,
    /// ρ̄ = passive(H_β(ρ̃)).
    pub rho: V,
    /// dρ̄/dρ̃, 0 on passive elements.
    pub slope: V,
    /// ∂c/∂x.
    pub dc: V,
    /// ∂V/∂x (V the volume fraction).
    pub dv: V,
    /// √(−dc/dv) of the OC update, −1 where x is kept.
    pub root: V,
    /// Scratch: the inputs of the filter transpose (a backend that stages
    /// them; the CPU's are its own).
    pub staged: [V; 2],
}

impl<V> Fields<V> {
    pub fn new<B: Backend<Vector = V>>(be: &B, n: usize) -> Result<Fields<V>, BackendError> {
        Ok(Fields {
            filtered: be.zeros(n)?,
            rho: be.zeros(n)?,
            slope: be.zeros(n)?,
            dc: be.zeros(n)?,
            dv: be.zeros(n)?,
            root: be.zeros(n)?,
            staged: [be.zeros(n)?, be.zeros(n)?],
        })
    }
}

/// How design variables become moduli at one continuation stage:
/// ρ̃ = F x (the filter), ρ̄ = passive(H_β(ρ̃)) (projection, then the mask),
/// Eₑ = Emin + ρ̄ₑᵖ (E0 − Emin). The operations of one stage share it.
pub struct DesignMap<'a, B: DesignBackend + ?Sized> {
    pub filter: &'a B::Filter,
    pub mask: &'a B::Mask,
    pub beta: f64,
    pub penal: f64,
}

/// One OC trial design: outᵢ = clamp(xᵢ rootᵢ scale, [xᵢ − move_limit,
/// xᵢ + move_limit] ∩ [0, 1]), or xᵢ where rootᵢ < 0 (see [`oc::trial`]).
pub struct OcTrial<'a, V> {
    pub x: &'a V,
    pub root: &'a V,
    /// 1/√λ for the multiplier λ.
    pub scale: f64,
    pub move_limit: f64,
}

/// The design-field operations (see the module doc). Slots: each method
/// writes the scalars it names into `s[out..]`.
pub trait DesignBackend: ElasticBackend {
    /// The density filter of radius rmin on a mesh (the stencil is implied
    /// by rmin; the device keeps the normalization Hᵢ).
    type Filter;
    /// Which elements are design variables, solid or void.
    type Mask;

    fn design_filter(&self, mesh: &Mesh, rmin: f64) -> Result<Self::Filter, BackendError>;
    fn design_mask(&self, passive: &[Passive]) -> Result<Self::Mask, BackendError>;

    /// ρ̃ = F x; ρ̄ = passive(H_β(ρ̃)); slope = dρ̄/dρ̃ (0 on passive);
    /// Eₑ = Emin + ρ̄ₑᵖ (E0 − Emin) into `op` (f64 and f32);
    /// `s[out]` = Σ ρ̄;  `s[out + 1]` = Σ ρ̄(1 − ρ̄).
    fn design_physical(
        &self,
        map: &DesignMap<'_, Self>,
        x: &Self::Vector,
        fields: &mut Fields<Self::Vector>,
        op: &mut Self::Elastic,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;

    /// cₑ = uₑᵀ Kₑ uₑ;  `s[out]` = Σ Eₑ cₑ (the compliance);
    /// dc = Fᵀ(−p ρ̄ᵖ⁻¹ (E0 − Emin) c ⊙ slope);  dv = Fᵀ(slope / N).
    fn design_sensitivities(
        &self,
        map: &DesignMap<'_, Self>,
        u: &Self::Vector,
        fields: &mut Fields<Self::Vector>,
        op: &mut Self::Elastic,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;

    /// root = √(−dc/dv) on design elements (−1 elsewhere, see
    /// [`oc::prepare`]);  `s[out]` = Σ ln(−dc/dv) over design elements where
    /// it is positive;  s[out + 1] = their count.
    fn oc_prepare(
        &self,
        mask: &Self::Mask,
        fields: &mut Fields<Self::Vector>,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;

    /// x_new = the OC trial of scale 1/√λ ([`oc::trial`]);
    /// `s[out]` = Σ passive(H_β(F x_new)) (the trial's physical volume × N).
    fn oc_trial(
        &self,
        map: &DesignMap<'_, Self>,
        trial: OcTrial<'_, Self::Vector>,
        x_new: &mut Self::Vector,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;

    /// `s[out]` = Σ passive(H_β(F y)).
    fn design_volume(
        &self,
        map: &DesignMap<'_, Self>,
        y: &Self::Vector,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;

    /// `s[out]` = max |a − b|.
    fn max_abs_diff(
        &self,
        a: &Self::Vector,
        b: &Self::Vector,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;
}

/// Σ passive(H_β(F y)) on the host, one fused pass (no field stored).
pub fn volume_sum(filter: &DensityFilter, beta: f64, y: &[f64], passive: &[Passive]) -> f64 {
    let project = projection::projector(beta);
    filter.row_sums(y, |start, row| {
        let kinds = &passive[start..start + row.len()];
        row.iter()
            .zip(kinds)
            .map(|(&v, k)| match k {
                Passive::Design => project(v),
                Passive::Solid => 1.0,
                Passive::Void => 0.0,
            })
            .sum()
    })
}

fn slot(s: &mut [f64], i: usize) -> Result<&mut f64, BackendError> {
    let n = s.len();
    s.get_mut(i).ok_or(BackendError::Length(i + 1, n))
}

impl DesignBackend for CpuBackend {
    type Filter = DensityFilter;
    type Mask = Vec<Passive>;

    fn design_filter(&self, mesh: &Mesh, rmin: f64) -> Result<DensityFilter, BackendError> {
        Ok(DensityFilter::new(*mesh, rmin))
    }

    fn design_mask(&self, passive: &[Passive]) -> Result<Vec<Passive>, BackendError> {
        Ok(passive.to_vec())
    }

    fn design_physical(
        &self,
        map: &DesignMap<'_, Self>,
        x: &Vec<f64>,
        f: &mut Fields<Vec<f64>>,
        op: &mut CpuElastic,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let (filter, mask, beta, penal) = (map.filter, map.mask, map.beta, map.penal);
        filter.apply(x, &mut f.filtered);
        projection::project(beta, &f.filtered, &mut f.rho);
        (f.rho.par_iter_mut().zip(mask.par_iter())).for_each(|(r, p)| match p {
            Passive::Design => {}
            Passive::Solid => *r = 1.0,
            Passive::Void => *r = 0.0,
        });
        projection::derivative(beta, &f.filtered, &mut f.slope);
        (f.slope.par_iter_mut().zip(mask.par_iter())).for_each(|(v, p)| {
            if *p != Passive::Design {
                *v = 0.0;
            }
        });
        // E = Emin + ρ̄ᵖ (E0 − Emin)
        let e: Vec<f64> = (f.rho.par_iter())
            .map(|&r| E_MIN + power(r, penal) * (E0 - E_MIN))
            .collect();
        self.elastic_set_moduli(op, &e)?;
        *slot(s, out)? = ordered_sum(&f.rho, |_, r| r);
        *slot(s, out + 1)? = ordered_sum(&f.rho, |_, r| r * (1.0 - r));
        Ok(())
    }

    fn design_sensitivities(
        &self,
        map: &DesignMap<'_, Self>,
        u: &Vec<f64>,
        f: &mut Fields<Vec<f64>>,
        op: &mut CpuElastic,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let (filter, penal) = (map.filter, map.penal);
        let ce = self.element_energies(op, u)?;
        let e = op.moduli();
        *slot(s, out)? = ordered_sum(&ce, |i, c| e[i] * c);
        let (rho, slope, n) = (&f.rho, &f.slope, f.rho.len());
        // ∂/∂ρ̄, times dρ̄/dρ̃ (0 on passive elements), then Fᵀ.
        let dc_t: Vec<f64> = (0..n)
            .into_par_iter()
            .map(|i| -penal * power(rho[i], penal - 1.0) * (E0 - E_MIN) * ce[i] * slope[i])
            .collect();
        let dv_t: Vec<f64> = slope.par_iter().map(|s| s / n as f64).collect();
        filter.apply_transpose(&dc_t, &mut f.dc);
        filter.apply_transpose(&dv_t, &mut f.dv);
        Ok(())
    }

    fn oc_prepare(
        &self,
        mask: &Vec<Passive>,
        f: &mut Fields<Vec<f64>>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let design: Vec<bool> = mask.iter().map(|&p| p == Passive::Design).collect();
        let (root, sum_log, count) = oc::prepare(&f.dc, &f.dv, &design);
        f.root = root;
        *slot(s, out)? = sum_log;
        *slot(s, out + 1)? = count as f64;
        Ok(())
    }

    fn oc_trial(
        &self,
        map: &DesignMap<'_, Self>,
        t: OcTrial<'_, Vec<f64>>,
        x_new: &mut Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        oc::trial(t.x, t.root, t.scale, t.move_limit, x_new);
        *slot(s, out)? = volume_sum(map.filter, map.beta, x_new, map.mask);
        Ok(())
    }

    fn design_volume(
        &self,
        map: &DesignMap<'_, Self>,
        y: &Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        *slot(s, out)? = volume_sum(map.filter, map.beta, y, map.mask);
        Ok(())
    }

    fn max_abs_diff(
        &self,
        a: &Vec<f64>,
        b: &Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        *slot(s, out)? = (a.par_iter().zip(b.par_iter()))
            .map(|(a, b)| (a - b).abs())
            .reduce(|| 0.0, f64::max);
        Ok(())
    }
}

/// Σᵢ f(i, vᵢ) in fixed-size chunks added in order: unlike rayon's `sum`,
/// whose split points depend on scheduling, the result does not change from
/// run to run or with the thread count.
pub fn ordered_sum(v: &[f64], f: impl Fn(usize, f64) -> f64 + Sync) -> f64 {
    const CHUNK: usize = 8192;
    let parts: Vec<f64> = v
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            (chunk.iter().enumerate()).fold(0.0, |s, (k, &x)| s + f(c * CHUNK + k, x))
        })
        .collect();
    parts.iter().sum()
}
