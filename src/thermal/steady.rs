//! Steady state: stack → power → assembly → PCG on a backend → temperatures
//! and a [`Summary`].
