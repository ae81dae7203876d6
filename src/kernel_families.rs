//! The inventory of every CUDA kernel family the binary embeds: the
//! executor's own ([`backend::cuda::families`]) and each application's
//! ([`thermal::device::cuda::families`], [`topopt::cuda::families`]). It sits at crate level because the CUDA
//! executor knows no application's kernels; runs never read it (each
//! compiles only the families it launches), checks that compile them all
//! without a GPU do (`tests/kernels_nvrtc.rs`, which also fails when a
//! `kernels/*.cu` file is missing from it).
//!
//! [`backend::cuda::families`]: crate::backend::cuda::families
//! [`thermal::device::cuda::families`]: crate::thermal::device::cuda::families
//! [`topopt::cuda::families`]: crate::topopt::cuda::families

use crate::backend::cuda::KernelFamily;

/// Every family, the executor's first.
pub fn all() -> Vec<&'static KernelFamily> {
    let mut v = crate::backend::cuda::families().to_vec();
    v.extend(crate::thermal::device::cuda::families());
    v.extend(crate::topopt::cuda::families());
    v
}
