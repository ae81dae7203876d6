//! Every HotSpot configuration setting the importer knows, and what becomes
//! of it: used (mapped to a cuth key or checked), or without effect on the
//! thermal model (with the reason, listed in the TOML). A setting not listed
//! here is an error, so nothing in a `.config` is silently dropped.

/// Settings the conversion reads (see `hotspot.rs`).
pub const USED: &[&str] = &[
    "ambient",
    "r_convec",
    "c_convec",
    "grid_rows",
    "grid_cols",
    "s_spreader",
    "t_spreader",
    "k_spreader",
    "p_spreader",
    "material_spreader",
    "s_sink",
    "t_sink",
    "k_sink",
    "p_sink",
    "material_sink",
    "t_chip",
    "k_chip",
    "p_chip",
    "material_chip",
    "t_interface",
    "k_interface",
    "p_interface",
    "material_interface",
    "sampling_intvl",
    "init_temp",
    "init_file",
    "model_type",
    "grid_map_mode",
    "model_secondary",
    "leakage_used",
    "package_model_used",
    "use_microfluidic_cooling",
    "use_microchannels",
    "grid_layer_file",
    "materials_file",
    "detailed_3D",
    "f",
    "p",
];

/// Settings with no effect on the thermal model cuth builds, and why.
pub const NO_EFFECT: &[(&str, &str)] = &[
    ("thermal_threshold", "dynamic thermal management threshold"),
    ("dtm_used", "dynamic thermal management"),
    ("base_proc_freq", "processor frequency (DTM)"),
    ("steady_file", "an output file"),
    ("grid_steady_file", "an output file"),
    ("grid_transient_file", "an output file"),
    ("o", "an output file"),
    ("d", "an output file"),
    ("c", "the configuration file itself"),
    ("block_omit_lateral", "block model only"),
    ("leakage_mode", "used only with -leakage_used 1"),
    (
        "package_config_file",
        "used only with -package_model_used 1",
    ),
    // Secondary heat path: used only with -model_secondary 1 (an error).
    (
        "r_convec_sec",
        "secondary path, used only with -model_secondary 1",
    ),
    (
        "c_convec_sec",
        "secondary path, used only with -model_secondary 1",
    ),
    (
        "n_metal",
        "secondary path, used only with -model_secondary 1",
    ),
    (
        "t_metal",
        "secondary path, used only with -model_secondary 1",
    ),
    ("t_c4", "secondary path, used only with -model_secondary 1"),
    ("s_c4", "secondary path, used only with -model_secondary 1"),
    ("n_c4", "secondary path, used only with -model_secondary 1"),
    ("s_sub", "secondary path, used only with -model_secondary 1"),
    ("t_sub", "secondary path, used only with -model_secondary 1"),
    (
        "s_solder",
        "secondary path, used only with -model_secondary 1",
    ),
    (
        "t_solder",
        "secondary path, used only with -model_secondary 1",
    ),
    ("s_pcb", "secondary path, used only with -model_secondary 1"),
    ("t_pcb", "secondary path, used only with -model_secondary 1"),
    // Microchannel cooling: read with -use_microchannels 1 and a .csv layer.
    (
        "pumping_pressure",
        "microchannel cooling only (-use_microchannels 1 with a .csv layer)",
    ),
    (
        "pump_internal_res",
        "microchannel cooling only (-use_microchannels 1 with a .csv layer)",
    ),
    (
        "inlet_temperature",
        "microchannel cooling only (-use_microchannels 1 with a .csv layer)",
    ),
    (
        "coolant_material",
        "microchannel cooling only (-use_microchannels 1 with a .csv layer)",
    ),
    (
        "coolant_capac",
        "microchannel cooling only (-use_microchannels 1 with a .csv layer)",
    ),
    (
        "coolant_res",
        "microchannel cooling only (-use_microchannels 1 with a .csv layer)",
    ),
    (
        "coolant_visc",
        "microchannel cooling only (-use_microchannels 1 with a .csv layer)",
    ),
    (
        "wall_material",
        "microchannel cooling only (-use_microchannels 1 with a .csv layer)",
    ),
    (
        "wall_capac",
        "microchannel cooling only (-use_microchannels 1 with a .csv layer)",
    ),
    (
        "wall_res",
        "microchannel cooling only (-use_microchannels 1 with a .csv layer)",
    ),
    (
        "htc",
        "microchannel cooling only (-use_microchannels 1 with a .csv layer)",
    ),
    (
        "network_file",
        "microchannel cooling only (-use_microchannels 1 with a .csv layer)",
    ),
    // HotFloorplan's settings share the file.
    ("wrap_l2", "floorplanner (HotFloorplan) only"),
    ("l2_label", "floorplanner (HotFloorplan) only"),
    ("model_rim", "floorplanner (HotFloorplan) only"),
    ("rim_thickness", "floorplanner (HotFloorplan) only"),
    ("compact_ratio", "floorplanner (HotFloorplan) only"),
    ("n_orients", "floorplanner (HotFloorplan) only"),
    ("P0", "floorplanner (HotFloorplan) only"),
    ("Davg", "floorplanner (HotFloorplan) only"),
    ("Kmoves", "floorplanner (HotFloorplan) only"),
    ("Rcool", "floorplanner (HotFloorplan) only"),
    ("Rreject", "floorplanner (HotFloorplan) only"),
    ("Nmax", "floorplanner (HotFloorplan) only"),
    ("lambdaA", "floorplanner (HotFloorplan) only"),
    ("lambdaT", "floorplanner (HotFloorplan) only"),
    ("lambdaW", "floorplanner (HotFloorplan) only"),
];

/// Why `name` has no effect, or `None` if it is used or unknown.
pub fn no_effect(name: &str) -> Option<&'static str> {
    NO_EFFECT.iter().find(|(n, _)| *n == name).map(|(_, w)| *w)
}

pub fn is_used(name: &str) -> bool {
    USED.contains(&name)
}

/// HotSpot 6/7 built-in defaults (`default_thermal_config` in temperature.c).
pub mod default {
    pub const T_CHIP: f64 = 0.15e-3;
    pub const K_CHIP: f64 = 100.0;
    pub const P_CHIP: f64 = 1.75e6;
    pub const C_CONVEC: f64 = 140.4;
    pub const R_CONVEC: f64 = 0.1;
    pub const S_SINK: f64 = 60e-3;
    pub const T_SINK: f64 = 6.9e-3;
    pub const K_SINK: f64 = 400.0;
    pub const P_SINK: f64 = 3.55e6;
    pub const S_SPREADER: f64 = 30e-3;
    pub const T_SPREADER: f64 = 1e-3;
    pub const K_SPREADER: f64 = 400.0;
    pub const P_SPREADER: f64 = 3.55e6;
    pub const T_INTERFACE: f64 = 20e-6;
    pub const K_INTERFACE: f64 = 4.0;
    pub const P_INTERFACE: f64 = 4.0e6;
    pub const AMBIENT: f64 = 45.0 + 273.15;
    pub const INIT_TEMP: f64 = 60.0 + 273.15;
    pub const SAMPLING_INTVL: f64 = 3.333e-6;
    pub const GRID: usize = 64;
}
