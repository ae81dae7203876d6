//! Which entries of `<out>` each command owns: the names a commit removes
//! when this run did not write them (step 3 of the transaction), so that
//! `<out>` holds exactly one run's outputs. Split from `transaction.rs`,
//! which stages and commits; the names follow what `output::write`,
//! `output::transient`, `topopt::output` and the sweep write.

/// Which existing entries of `<out>` a commit treats as its own kind and
/// removes when it did not write them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owned {
    /// `solve` and `transient`: `NN_<layer>.png|csv`, `blocks.csv`,
    /// `blocks.steady`, `probes.csv`, `field.vtr`, `field.pvd`, `summary.json`, `timeseries.csv`, `temperature.png`,
    /// `final/`, `snapshots/`.
    Thermal,
    /// `topopt`: `density.vti`, `view_[xyz].png`, `design.stl`, `history.csv`,
    /// `summary.json`.
    Topopt,
    /// `sweep`: `sweep.csv`, `summary.json`, `cases/` (maps with `--maps`).
    Sweep,
    /// Nothing (benchmark reports: a fixed set of names, overwritten).
    Nothing,
}

impl Owned {
    /// Whether an entry named `name` in `<out>` is of this kind.
    pub fn owns(self, name: &str) -> bool {
        match self {
            Owned::Thermal => {
                matches!(
                    name,
                    "blocks.csv"
                        | "blocks.steady"
                        | "probes.csv"
                        | "field.vtr"
                        | "field.pvd"
                        | "summary.json"
                        | "timeseries.csv"
                        | "temperature.png"
                        | "final"
                        | "snapshots"
                ) || is_layer_map(name)
            }
            Owned::Topopt => matches!(
                name,
                "density.vti"
                    | "view_x.png"
                    | "view_y.png"
                    | "view_z.png"
                    | "design.stl"
                    | "history.csv"
                    | "summary.json"
            ),
            Owned::Sweep => matches!(name, "sweep.csv" | "summary.json" | "cases"),
            Owned::Nothing => false,
        }
    }
}

/// `NN_<sanitized layer>.png|csv` as `output::write` names layer maps.
fn is_layer_map(name: &str) -> bool {
    let Some(stem) = name
        .strip_suffix(".png")
        .or_else(|| name.strip_suffix(".csv"))
    else {
        return false;
    };
    let Some((digits, rest)) = stem.split_once('_') else {
        return false;
    };
    digits.len() >= 2
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
