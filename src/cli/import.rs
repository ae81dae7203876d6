//! `cuth import hotspot|3dice`: convert another simulator's model into a cuth
//! stack TOML (see `cuth::import`). Writes the TOML (and, for 3D-ICE
//! transients, a CSV trace beside it), never over an existing file unless
//! `--force`; prints the approximations and the transient command to stderr.

use anyhow::Context;
use cuth::error::InputError as UsageError;
use cuth::import::{self, hotspot::HotspotInput, Imported};
use cuth::output::{Owned, Transaction};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub from: From,
}

#[derive(Debug, clap::Subcommand)]
pub enum From {
    /// A HotSpot model: configuration file plus layer file (.lcf) or one
    /// floorplan (.flp), and the power trace (.ptrace). Floorplans and trace
    /// are referenced from the TOML by relative paths, not copied.
    Hotspot {
        /// HotSpot configuration file (-c).
        #[arg(long, value_name = "F.config")]
        config: PathBuf,
        /// Layer configuration file (-grid_layer_file) [default: the config's].
        #[arg(long, value_name = "F.lcf", conflicts_with = "flp")]
        lcf: Option<PathBuf>,
        /// Floorplan for HotSpot's default chip + interface layers (-f), without an .lcf.
        #[arg(long, value_name = "F.flp")]
        flp: Option<PathBuf>,
        /// Power trace (-p) [default: the config's -p].
        #[arg(long, value_name = "F.ptrace")]
        ptrace: Option<PathBuf>,
        /// HotSpot 7 materials file (-materials_file), for material names.
        #[arg(long, value_name = "M")]
        materials: Option<PathBuf>,
        /// Write a uniform nx x ny grid over the whole package (cells no larger
        /// than HotSpot's over the chip) instead of the non-uniform grid.
        #[arg(long)]
        uniform_grid: bool,
        #[command(flatten)]
        out: OutArgs,
    },
    /// A 3D-ICE stack description (.stk) and its floorplans.
    #[command(name = "3dice")]
    ThreeDice {
        /// The .stk file.
        stk: PathBuf,
        #[command(flatten)]
        out: OutArgs,
    },
}

#[derive(Debug, clap::Args)]
pub struct OutArgs {
    /// Stack file to write [default: <input stem>.toml in the current directory].
    #[arg(long, value_name = "STACK.toml")]
    pub out: Option<PathBuf>,
    /// Overwrite existing output files.
    #[arg(long)]
    pub force: bool,
    /// Print nothing on success.
    #[arg(long, short)]
    pub quiet: bool,
}

fn default_out(input: &Path) -> PathBuf {
    let stem = input
        .file_stem()
        .map_or("imported".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.toml"))
}

pub fn run(args: &ImportArgs) -> anyhow::Result<()> {
    let (imported, out) = match &args.from {
        From::Hotspot {
            config,
            lcf,
            flp,
            ptrace,
            materials,
            uniform_grid,
            out,
        } => {
            let input = lcf.as_ref().or(flp.as_ref()).unwrap_or(config);
            let path = out.out.clone().unwrap_or_else(|| default_out(input));
            let inp = HotspotInput {
                config: config.clone(),
                lcf: lcf.clone(),
                flp: flp.clone(),
                ptrace: ptrace.clone(),
                materials: materials.clone(),
                out: path.clone(),
                uniform_grid: *uniform_grid,
            };
            (import::hotspot::import(&inp)?, (path, out))
        }
        From::ThreeDice { stk, out } => {
            let path = out.out.clone().unwrap_or_else(|| default_out(stk));
            (import::threedice::import(stk, &path)?, (path, out))
        }
    };
    write(&imported, &out.0, out.1)
}

fn write(imp: &Imported, path: &Path, opts: &OutArgs) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut files = vec![(path.to_path_buf(), imp.toml.as_str())];
    for e in &imp.extra {
        files.push((dir.join(&e.name), e.contents.as_str()));
    }
    if !opts.force {
        if let Some((p, _)) = files.iter().find(|(p, _)| p.exists()) {
            return Err(UsageError(format!(
                "{} exists: pass --force to overwrite it",
                p.display()
            ))
            .into());
        }
    }
    // One output transaction, as every command writes: each file staged
    // beside its destination and renamed into place only when all are staged.
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut txn = Transaction::begin(dir, Owned::Nothing)?;
    for (p, text) in &files {
        txn.stage_external(p, text.as_bytes())
            .with_context(|| format!("writing {}", p.display()))?;
    }
    txn.commit()?;
    if !opts.quiet {
        for (p, _) in &files {
            eprintln!("cuth: wrote {}", p.display());
        }
        for n in &imp.notes {
            eprintln!("cuth: note: {n}");
        }
        match &imp.next {
            Some(cmd) => eprintln!("cuth: next: {cmd}"),
            None => eprintln!("cuth: next: cuth solve {}", path.display()),
        }
    }
    Ok(())
}

/// The message for `cuth solve/transient` given another tool's file (exit 2).
pub fn refuse_foreign(path: &Path) -> Result<(), UsageError> {
    match import::suggest_import(path) {
        Some(msg) => Err(UsageError(msg)),
        None => Ok(()),
    }
}
