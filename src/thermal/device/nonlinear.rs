//! The nonlinear capability: what the outer iteration of a
//! temperature-dependent solve does to its fields, where they live: the
//! steady Picard loop (`thermal::nonlinear::steady`) and the transient step
//! (`thermal::transient::nonlinear`) are each written once over this trait.
//! The system A(T) (and C(T) in a transient run), re-assembled into the
//! arrays of the last one, the leakage at the current iterate, the shifted
//! right-hand side,
//! the energy balance, and the vector updates and reductions that the
//! loop's decisions (max change, hottest cell, Anderson's dot products and
//! safeguards) read as scalars. The CPU assembles on the host
//! (`assemble::cell_materials`, `LeakageModel::eval`: `cpu/nonlinear.rs`);
//! CUDA evaluates the laws and the leakage on the device and assembles
//! there with the device assembly's kernels (`cuda/nonlinear.rs`), so the
//! temperature never leaves the GPU inside the loop.

use super::ThermalOps;
use crate::backend::{Backend, BackendError, QuadDiagOps};
use crate::grid::Grid;
use crate::linalg::Offset;
use crate::power::LayerPower;
use crate::stack::Stack;
use crate::thermal::assembly_input::AssemblyInput;
use crate::thermal::nonlinear::leakage::LeakageModel;

/// What the nonlinear terms are built from.
#[derive(Clone, Copy)]
pub struct NlContext<'a> {
    pub stack: &'a Stack,
    pub grid: &'a Grid,
    /// The layers' power (blocks, material patches, raster weights).
    pub power: &'a [LayerPower],
    pub leak: &'a LeakageModel,
    /// Whether the heat capacities follow their laws too (a transient run);
    /// the steady solve needs only the conductivities.
    pub capacity_laws: bool,
}

impl NlContext<'_> {
    /// [`laws_vary`] of this context.
    pub fn laws_vary(&self) -> bool {
        laws_vary(self.stack, self.capacity_laws)
    }
}

/// Whether the system of `stack` is assembled per cell from the laws at the
/// temperature: some conductivity varies, or (with `capacity_laws`, a
/// transient run) some heat capacity does. Otherwise the matrix and the
/// capacities are the constant-property assembly's.
pub fn laws_vary(stack: &Stack, capacity_laws: bool) -> bool {
    let c = |m: &Option<crate::stack::MaterialLaw>| m.as_ref().is_some_and(|m| m.c_varies());
    stack.k_varies()
        || (capacity_laws
            && stack
                .layers
                .iter()
                .any(|l| c(&l.law) || l.unit_materials.iter().any(|u| c(&u.law))))
}

/// The power of one outer iteration ([`NonlinearOps::nl_power`]).
pub struct NlPower {
    /// Σ rhs = dynamic power + leakage, W.
    pub power_in_w: f64,
    /// Leakage per source of the model, W.
    pub leakage_w: Vec<f64>,
}

/// A transient run's system assembled on the device
/// ([`NonlinearOps::tr_assemble`]): the steady matrix A, the heat capacities
/// C and the first power where the steps use them, the planes'
/// conductances to ambient on the host (energy balance), and the compact
/// inputs kept for later power rows ([`NonlinearOps::tr_power`]).
pub struct TransientAssembly<M, V, K> {
    pub a: M,
    /// c·V per cell, J/K.
    pub capacity: V,
    /// Power per cell, W.
    pub rhs: V,
    pub g_top: Vec<f64>,
    pub g_bottom: Vec<f64>,
    pub kept: K,
}

/// [`TransientAssembly`] of backend `B`.
pub type TransientAssemblyOf<B> = TransientAssembly<
    <B as QuadDiagOps>::Matrix,
    <B as Backend>::Vector,
    <B as NonlinearOps>::AsmKept,
>;

/// Min, max and whether every value is finite.
#[derive(Clone, Copy, Debug)]
pub struct Range {
    pub min: f64,
    pub max: f64,
    pub finite: bool,
}

pub trait NonlinearOps: ThermalOps {
    /// The temperature-dependent terms in this executor's memory (laws,
    /// mixes, leakage cells, the dynamic power).
    type Physics;
    /// The system at one temperature field.
    type NlSystem;
    /// The compact assembly inputs a transient run keeps on this device.
    type AsmKept;

    /// A transient run's A, C, first power and films built on this device
    /// from compact inputs; `None` where this executor
    /// assembles on the host (the CPU, or `CUTH_HOST_ASSEMBLY`).
    fn tr_assemble(
        &self,
        inp: &AssemblyInput,
    ) -> Result<Option<TransientAssemblyOf<Self>>, BackendError> {
        let _ = inp;
        Ok(None)
    }

    /// `out` = the power per cell of the per-layer plane `maps` (as
    /// `power::schedule::cell_power`), with the inputs kept by
    /// [`Self::tr_assemble`].
    fn tr_power(
        &self,
        kept: &Self::AsmKept,
        maps: &[Vec<f64>],
        out: &mut Self::Vector,
    ) -> Result<(), BackendError> {
        let _ = (kept, maps, out);
        Err(BackendError::Unsupported(
            "tr_power without device assembly",
        ))
    }

    /// The dynamic power of `ph` (what [`Self::nl_power`] adds the leakage
    /// to) set to `p` (a transient run's power, a new trace row).
    fn tr_set_dynamic(&self, ph: &mut Self::Physics, p: &Self::Vector) -> Result<(), BackendError>;

    /// The matrix A and the heat capacities of `sys`, where they live (a
    /// transient step shifts A by C/Δt in place and swaps it with its own:
    /// `transient::Stepper::set_matrix_device`).
    fn tr_parts<'s>(
        &self,
        sys: &'s mut Self::NlSystem,
    ) -> Result<(&'s mut Self::Matrix, &'s Self::Vector), BackendError>;

    /// A + diag(`w`) in place (the diagonal and `amb`, as the difference
    /// form needs: a backward-Euler step's A + C/Δt), the former `amb` (A·1
    /// of the steady operator) into `amb`.
    fn tr_shift(
        &self,
        a: &mut Self::Matrix,
        w: &Self::Vector,
        amb: &mut Self::Vector,
    ) -> Result<(), BackendError>;

    /// Prepares the terms of `cx`; `dynamic`: W per cell (`None`: the
    /// layers' own power maps, or [`Self::tr_set_dynamic`]).
    fn nl_physics(
        &self,
        cx: &NlContext,
        dynamic: Option<&[f64]>,
    ) -> Result<Self::Physics, BackendError>;

    /// The system at T = T_amb + `theta`, allocated: A(T) where
    /// [`NlContext::laws_vary`] (each cell's k, and c, from its laws at its
    /// own temperature, `assemble::cell_materials`), else the constant
    /// one; `Ok(Err(i))` when a law is not positive at cell i.
    fn nl_assemble(
        &self,
        cx: &NlContext,
        ph: &mut Self::Physics,
        theta: &Self::Vector,
    ) -> Result<Result<Self::NlSystem, usize>, BackendError>;

    /// [`Self::nl_assemble`] into the arrays of `sys` (an outer iteration
    /// re-assembling: nothing n-sized allocated where the backend can
    /// assemble in place); `sys` is unchanged when `Ok(Err(i))`.
    fn nl_reassemble(
        &self,
        cx: &NlContext,
        ph: &mut Self::Physics,
        theta: &Self::Vector,
        sys: &mut Self::NlSystem,
    ) -> Result<Result<(), usize>, BackendError>;

    fn nl_matrix<'s>(&self, sys: &'s Self::NlSystem) -> &'s Self::Matrix;

    /// The right-hand side of `sys`, for [`Self::nl_power`].
    fn nl_rhs_mut<'s>(&self, sys: &'s mut Self::NlSystem) -> &'s mut Self::Vector;

    /// `out` = dynamic power + leakage(T_amb + `theta`), W per cell.
    fn nl_power(
        &self,
        cx: &NlContext,
        ph: &mut Self::Physics,
        theta: &Self::Vector,
        out: &mut Self::Vector,
    ) -> Result<NlPower, BackendError>;

    /// `b` = the shifted right-hand side of `linalg::Offset` for the rhs of
    /// `sys` (Σ rhs = `power_in_w`, from [`Self::nl_power`]); the shift
    /// (its `rhs` left empty: b is the shifted one).
    fn nl_shifted_rhs(
        &self,
        sys: &Self::NlSystem,
        power_in_w: f64,
        b: &mut Self::Vector,
    ) -> Result<Offset, BackendError>;

    /// |heat out − power in| / power in for the rise `theta` of `sys`.
    fn nl_energy(
        &self,
        cx: &NlContext,
        sys: &Self::NlSystem,
        theta: &Self::Vector,
        power_in_w: f64,
    ) -> Result<f64, BackendError>;

    /// Total leakage at T_amb + `theta`, W (the runaway message).
    fn nl_leakage_total(
        &self,
        cx: &NlContext,
        ph: &mut Self::Physics,
        theta: &Self::Vector,
    ) -> Result<f64, BackendError>;

    /// The conductances to ambient of `sys` (top plane, bottom plane) on the
    /// host, into `top` and `bottom` (resized), for the summary and a
    /// transient step's energy balance.
    fn nl_coupling(
        &self,
        sys: &Self::NlSystem,
        top: &mut Vec<f64>,
        bottom: &mut Vec<f64>,
    ) -> Result<(), BackendError>;

    /// y = α x + β y + γ, a term taken only when its coefficient is not 0
    /// (x may be `None` when α = 0), summed left to right.
    fn nl_axpby(
        &self,
        x: Option<&Self::Vector>,
        alpha: f64,
        beta: f64,
        y: &mut Self::Vector,
        gamma: f64,
    ) -> Result<(), BackendError>;

    /// x·y as a host scalar.
    fn nl_dot(&self, x: &Self::Vector, y: &Self::Vector) -> Result<f64, BackendError>;

    /// max |(x + s) − (y + s)| (NaN ignored, as `f64::max`).
    fn nl_change(&self, x: &Self::Vector, y: &Self::Vector, s: f64) -> Result<f64, BackendError>;

    /// Index and value of the largest x + s, the first one that is not
    /// finite if any.
    fn nl_hottest(&self, x: &Self::Vector, s: f64) -> Result<(usize, f64), BackendError>;

    fn nl_range(&self, x: &Self::Vector) -> Result<Range, BackendError>;

    /// `x[i]` on the host.
    fn nl_value(&self, x: &Self::Vector, i: usize) -> Result<f64, BackendError>;
}

/// [`NonlinearOps::nl_hottest`] on host values: index and value of the
/// largest, the first non-finite one winning.
pub fn hottest_of(v: impl Iterator<Item = f64>) -> (usize, f64) {
    let mut best = (0, f64::NEG_INFINITY);
    for (i, v) in v.enumerate() {
        if !v.is_finite() {
            return (i, v);
        }
        if v > best.1 {
            best = (i, v);
        }
    }
    best
}
