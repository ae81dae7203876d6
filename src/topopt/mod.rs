//! Minimum-compliance topology optimization (`cuth topopt`, DESIGN.md §7).

pub mod output;
