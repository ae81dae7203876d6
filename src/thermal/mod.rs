//! Drivers: steady state (and later transient) from a resolved stack to a
//! temperature field and a [`summary::Summary`].

pub mod steady;
pub mod summary;
