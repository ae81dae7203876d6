//! The knobs that pick a variant of the elastic operator's kernels within a
//! schedule ([`OperatorKind`](crate::topopt::backend::OperatorKind)): where
//! the f32 fused kernel accumulates, where Kₑ is read from (with the
//! by-value parameter type it is passed as) and the fused kernel's block
//! size, each defaulting to the fastest measured on the H200. Split from
//! `mod.rs`, which holds the operator's state and the trait's dispatch.

/// Where the f32 fused kernel accumulates (see the module doc). The default
/// is the faster one on the H200 (BENCHMARKS.md, "Topology optimization":
/// 120 against 147 µs at 1M elements).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum F32Atomics {
    /// f64 atomics into y; x read as f64 (no conversion pass).
    F64,
    /// x converted to f32 first, f32 atomics into an f32 accumulator, then
    /// converted back by the fix-up.
    #[default]
    F32,
}

/// Where the fused and node-centred kernels read Kₑ from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeSource {
    /// Copied to shared memory by every block (the paper's design): one
    /// shared load per multiply-add.
    Shared,
    /// Passed by value as a kernel parameter (constant bank): the unrolled
    /// multiply-adds take its entries as operands, no load instructions.
    Param,
    /// As `Param`, and the fused kernel halves its atomics by handing the
    /// shared face of x-neighbouring elements to the next lane with a warp
    /// shuffle (node-centred: same as `Param`). The fastest on the H200
    /// (fused f64 at 1M elements: 176 µs, against 210 with `Param` and 229
    /// with `Shared`).
    #[default]
    ParamMerged,
}

/// Kₑ by value, the `TopoKe64` / `TopoKe32` parameter of `kernels/topopt.cu`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeParam<T>(pub(crate) [T; 576]);

// SAFETY: a plain array of f32/f64, laid out as the C struct it stands for.
unsafe impl cudarc::driver::DeviceRepr for KeParam<f64> {}
unsafe impl cudarc::driver::DeviceRepr for KeParam<f32> {}

/// Threads per block of the fused kernel. The paper uses 128; with warp-merged
/// atomics 512 measured fastest on the H200 (f64 at 1M elements: 176 µs
/// against 286 at 128), and the other variants do not depend on it.
pub const FUSED_BLOCK: u32 = 512;
