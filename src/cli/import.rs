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
        /// HotSpot configuration file (-c) [required unless HOTSPOT_FLAGS has -c].
        #[arg(long, value_name = "F.config")]
        config: Option<PathBuf>,
        /// Layer configuration file (-grid_layer_file) [default: the config's].
        #[arg(long, value_name = "F.lcf", conflicts_with = "flp")]
        lcf: Option<PathBuf>,
        /// Floorplan for HotSpot's default chip + interface layers (-f), without
        /// an .lcf [default: the config's -f].
        #[arg(long, value_name = "F.flp")]
        flp: Option<PathBuf>,
        /// Power trace (-p) [default: the config's -p].
        #[arg(long, value_name = "F.ptrace")]
        ptrace: Option<PathBuf>,
        /// HotSpot 7 materials file (-materials_file), for material names
        /// [default: the config's, else HotSpot's built-in materials].
        #[arg(long, value_name = "M")]
        materials: Option<PathBuf>,
        /// Write a uniform nx x ny grid over the whole package (cells no larger
        /// than HotSpot's over the chip) instead of the non-uniform grid.
        #[arg(long)]
        uniform_grid: bool,
        #[command(flatten)]
        out: OutArgs,
        /// HotSpot's own command line, as its run.sh gives it, after cuth's flags
        /// (`-c F.config -f F.flp -p F.ptrace -materials_file M
        /// -grid_layer_file F.lcf -model_type grid -detailed_3D on ...`):
        /// its settings override the config's, as in HotSpot.
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "HOTSPOT_FLAGS"
        )]
        hotspot_flags: Vec<String>,
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
            hotspot_flags,
        } => {
            let mut inp = HotspotInput {
                config: config.clone().unwrap_or_default(),
                lcf: lcf.clone(),
                flp: flp.clone(),
                ptrace: ptrace.clone(),
                materials: materials.clone(),
                out: PathBuf::new(),
                uniform_grid: *uniform_grid,
                flags: Vec::new(),
            };
            take_hotspot_flags(&mut inp, hotspot_flags, config.is_some())?;
            let input = inp.lcf.as_ref().or(inp.flp.as_ref()).unwrap_or(&inp.config);
            inp.out = out.out.clone().unwrap_or_else(|| default_out(input));
            (import::hotspot::import(&inp)?, (inp.out.clone(), out))
        }
        From::ThreeDice { stk, out } => {
            let path = out.out.clone().unwrap_or_else(|| default_out(stk));
            (import::threedice::import(stk, &path)?, (path, out))
        }
    };
    write(&imported, &out.0, out.1)
}

/// HotSpot's command line (`-name value` pairs): its file flags fill the
/// input's files, where cuth's own flags did not; every other flag overrides
/// the config's setting of that name.
fn take_hotspot_flags(
    inp: &mut HotspotInput,
    flags: &[String],
    config_given: bool,
) -> Result<(), UsageError> {
    let mut pairs = flags.chunks(2);
    let mut config = config_given;
    for pair in pairs.by_ref() {
        let Some(name) = pair[0].strip_prefix('-').filter(|n| !n.is_empty()) else {
            return Err(UsageError(format!(
                "HotSpot flags: expected `-name value`, found `{}`",
                pair[0]
            )));
        };
        let Some(value) = pair.get(1) else {
            return Err(UsageError(format!("HotSpot flags: `-{name}` has no value")));
        };
        let file = || Some(PathBuf::from(value));
        let twice = |cuth: &str| {
            UsageError(format!(
                "HotSpot flags: `-{name}` and {cuth} both name the file: give one"
            ))
        };
        match name {
            "c" if config => return Err(twice("--config")),
            "c" => {
                inp.config = value.into();
                config = true;
            }
            "f" if inp.flp.is_some() => return Err(twice("--flp")),
            "f" => inp.flp = file(),
            "p" if inp.ptrace.is_some() => return Err(twice("--ptrace")),
            "p" => inp.ptrace = file(),
            "grid_layer_file" if inp.lcf.is_some() => return Err(twice("--lcf")),
            "grid_layer_file" => inp.lcf = file(),
            "materials_file" if inp.materials.is_some() => return Err(twice("--materials")),
            // As the config's setting: a file run.sh names but its folder
            // lacks is a note when no material needs it. HotSpot opens it
            // from the working directory.
            "materials_file" => {
                let path = std::env::current_dir().unwrap_or_default().join(value);
                let path = path.to_string_lossy().into_owned();
                inp.flags.push((name.to_string(), path));
            }
            _ if import::hotspot::is_setting(name) => {
                inp.flags.push((name.to_string(), value.clone()));
            }
            _ => {
                return Err(UsageError(format!(
                    "HotSpot flags: unknown HotSpot setting `-{name}`"
                )))
            }
        }
    }
    if !config {
        return Err(UsageError(
            "import hotspot: give the configuration file, as --config F.config or -c F.config among HotSpot's flags".into(),
        ));
    }
    if inp.lcf.is_some() && inp.flp.is_some() {
        return Err(UsageError(
            "import hotspot: a layer file (--lcf, -grid_layer_file) and a single floorplan (--flp, -f) exclude each other".into(),
        ));
    }
    Ok(())
}

fn write(imp: &Imported, path: &Path, opts: &OutArgs) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut files = vec![(path.to_path_buf(), imp.toml.as_str())];
    for e in &imp.extra {
        files.push((dir.join(&e.name), e.contents.as_str()));
    }
    // A destination of the wrong type (a directory, a FIFO, a link to
    // nothing) is bad input, refused before anything is staged.
    for (p, _) in &files {
        cuth::output::transaction::check_file_target(p)
            .map_err(|e| UsageError(format!("--out: {e}")))?;
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
