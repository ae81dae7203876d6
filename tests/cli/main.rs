//! Tests through the `cuth` binary: exit codes, messages, outputs, importers.

#[path = "../util/mod.rs"]
mod util;

mod bad_package_input;
mod bigrun;
mod book;
mod boundary;
mod corpus;
mod device;
mod die_view;
mod grid_slivers;
mod hotspot_outputs;
mod hotspot_reference;
mod import_3dice;
mod import_3dice_outputs;
mod import_3dice_peer;
mod import_hotspot;
mod import_hotspot_flags;
mod import_hotspot_microchannels;
mod knobs;
mod liquid;
mod messages;
#[cfg(feature = "mpi")]
mod mpi_ranks;
mod no_surprises;
mod out_folder;
mod output_paths;
mod probes;
mod reliability_inputs;
mod reliability_outputs;
mod serve;
mod slurm_sweep;
mod solve;
mod topopt_problems;
mod transient;
mod transient_steady_mean;
mod units;
mod validation_limits;
mod vtk;
