//! The `CUTH_*` environment variables, read once, into one typed value.
//!
//! They are diagnosis and benchmarking switches, not part of a run's input:
//! no stack file or flag sets them, and every one defaults to what a run
//! should do. The command line reads them with [`Knobs::from_env`] when a
//! command starts and hands each part to the code it steers; the library
//! never looks at the environment itself, so a caller that embeds it gets
//! [`Knobs::default`] (no variable set) unless it passes others. A value
//! that cannot be read is an error naming the variable ([`KnobError`]),
//! not a silent default.
//!
//! Every knob, by the field that holds it:
//!
//! | variable | field |
//! |---|---|
//! | `CUTH_CUDA_SYNC` | [`CudaKnobs::sync_each_launch`] |
//! | `CUTH_QD_SCHEDULE` | [`CudaKnobs::schedule`] |
//! | `CUTH_STAGE_MIB` | [`TransferKnobs::stage_mib`] |
//! | `CUTH_PAGEABLE_DOWNLOAD` | [`TransferKnobs::pageable_download`] |
//! | `CUTH_PAGEABLE_UPLOAD` | [`TransferKnobs::pageable_upload`] |
//! | `CUTH_CACHE_DIR`, `CUTH_NO_KERNEL_CACHE` | [`CudaKnobs::kernel_cache`] |
//! | `CUTH_HOST_ASSEMBLY` | [`CudaKnobs::host_assembly`] |
//! | `CUTH_NO_GRAPHS` | [`CudaKnobs::no_graphs`] |
//! | `CUTH_HOST_MEMORY_BYTES` | [`MemoryCaps::host`] |
//! | `CUTH_DEVICE_MEMORY_BYTES` | [`MemoryCaps::device`] |
//! | `CUTH_PROFILE_SYNC` | [`Knobs::profile_sync`] |
//!
//! A switch (`CUTH_CUDA_SYNC`, `CUTH_PAGEABLE_*`, `CUTH_HOST_ASSEMBLY`,
//! `CUTH_NO_GRAPHS`, `CUTH_PROFILE_SYNC`) is on when the variable is set, to any value: the
//! scripts write `VAR=1`, and `0` has never meant off for them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Every knob of a run; [`Knobs::default`] is the environment with none set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Knobs {
    /// How the CUDA backend launches, copies and caches.
    pub cuda: CudaKnobs,
    /// Caps on the memory a run may assume.
    pub memory: MemoryCaps,
    /// `CUTH_PROFILE_SYNC`: each timed part of a run waits for the device
    /// before it ends, so that asynchronous work is charged to the part
    /// that queued it (slower; for reading `timings_detail_s`).
    pub profile_sync: bool,
}

/// The CUDA backend's knobs, given to it when it is opened.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CudaKnobs {
    /// `CUTH_CUDA_SYNC`: wait for every kernel right after its launch, so
    /// that an asynchronous fault is reported against the kernel that caused
    /// it (slow).
    pub sync_each_launch: bool,
    /// `CUTH_QD_SCHEDULE=auto|rows|columns`: the thread schedule of the
    /// kernels that apply the matrix, to compare them (default `auto`).
    pub schedule: QdSchedule,
    /// Host ↔ device copies through pinned memory.
    pub transfer: TransferKnobs,
    /// Where compiled kernel images are cached on disk; `None` turns the
    /// cache off. `CUTH_NO_KERNEL_CACHE` set to anything but empty or `0`
    /// turns it off; else `$CUTH_CACHE_DIR`, else `$XDG_CACHE_HOME/cuth`,
    /// else `$HOME/.cache/cuth` (empty values count as unset). With no
    /// variable set, [`Knobs::default`], there is no folder and no cache.
    pub kernel_cache: Option<PathBuf>,
    /// `CUTH_HOST_ASSEMBLY`: assemble the system on the host, as the CPU
    /// does, instead of on the device (to compare the two, or to get the
    /// host's system on a GPU run).
    pub host_assembly: bool,
    /// `CUTH_NO_GRAPHS`: enqueue every kernel of a multigrid cycle from the
    /// host instead of replaying the cycle's recorded CUDA graph (to
    /// compare the two).
    pub no_graphs: bool,
}

/// The staged copies' knobs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransferKnobs {
    /// `CUTH_STAGE_MIB=N`: each of the two pinned staging buffers holds N
    /// MiB (raised to the backend's direct-copy threshold, 32 MiB), to
    /// measure what pinning costs against what larger pieces gain; `None`
    /// keeps the backend's size.
    pub stage_mib: Option<usize>,
    /// `CUTH_PAGEABLE_DOWNLOAD`: large downloads go straight to pageable
    /// memory, without staging (for comparison).
    pub pageable_download: bool,
    /// `CUTH_PAGEABLE_UPLOAD`: large uploads go straight from pageable
    /// memory, without staging (for comparison).
    pub pageable_upload: bool,
}

/// Caps on the free memory a run's plan and its executors see: the smaller
/// of the cap and what the system reports. A test fakes a small machine
/// with them; a user keeps a run from taking all of a shared one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryCaps {
    /// `CUTH_HOST_MEMORY_BYTES`: host bytes (decimal, surrounding blanks
    /// ignored).
    pub host: Option<u64>,
    /// `CUTH_DEVICE_MEMORY_BYTES`: device bytes (decimal, surrounding
    /// blanks ignored).
    pub device: Option<u64>,
}

/// Thread schedule of the kernels that apply the matrix (`kernels/common.cu`,
/// `qd_for_each_row`): one thread per row, or one per (x, y) column walking z
/// with the vertical neighbours in registers. Columns read every array from
/// DRAM once even when a z plane overflows L2, but need nx·ny threads to fill
/// the GPU; `Auto` takes them from one full wave of columns up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QdSchedule {
    #[default]
    Auto,
    Rows,
    Columns,
}

impl QdSchedule {
    pub fn name(self) -> &'static str {
        match self {
            QdSchedule::Auto => "auto",
            QdSchedule::Rows => "rows",
            QdSchedule::Columns => "columns",
        }
    }
}

/// A knob whose value cannot be read: the command line reports it as bad
/// input, naming the variable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("environment variable {variable}={value:?}: expected {expected}")]
pub struct KnobError {
    pub variable: &'static str,
    /// The value as set (lossily, when it is not UTF-8).
    pub value: String,
    pub expected: &'static str,
}

impl Knobs {
    /// The knobs of this process's environment.
    pub fn from_env() -> Result<Knobs, KnobError> {
        Knobs::from_lookup(|k| std::env::var_os(k))
    }

    /// The knobs of an environment given as a lookup, so that tests need
    /// not change the process's own.
    pub fn from_lookup(env: impl Fn(&str) -> Option<OsString>) -> Result<Knobs, KnobError> {
        let switch = |k: &str| env(k).is_some();
        let memory = MemoryCaps {
            host: bytes(&env, "CUTH_HOST_MEMORY_BYTES")?,
            device: bytes(&env, "CUTH_DEVICE_MEMORY_BYTES")?,
        };
        let transfer = TransferKnobs {
            stage_mib: stage_mib(&env)?,
            pageable_download: switch("CUTH_PAGEABLE_DOWNLOAD"),
            pageable_upload: switch("CUTH_PAGEABLE_UPLOAD"),
        };
        let cuda = CudaKnobs {
            sync_each_launch: switch("CUTH_CUDA_SYNC"),
            schedule: schedule(&env)?,
            transfer,
            kernel_cache: kernel_cache(&env),
            host_assembly: switch("CUTH_HOST_ASSEMBLY"),
            no_graphs: switch("CUTH_NO_GRAPHS"),
        };
        Ok(Knobs {
            cuda,
            memory,
            profile_sync: switch("CUTH_PROFILE_SYNC"),
        })
    }
}

type Lookup<'a> = dyn Fn(&str) -> Option<OsString> + 'a;

/// The value of `variable` as text, `None` when unset or empty.
fn text(
    env: &Lookup,
    variable: &'static str,
    expected: &'static str,
) -> Result<Option<String>, KnobError> {
    match env(variable) {
        None => Ok(None),
        Some(v) if v.is_empty() => Ok(None),
        Some(v) => v.into_string().map(Some).map_err(|v| KnobError {
            variable,
            value: v.to_string_lossy().into_owned(),
            expected,
        }),
    }
}

fn bytes(env: &Lookup, variable: &'static str) -> Result<Option<u64>, KnobError> {
    const EXPECTED: &str = "a number of bytes";
    let Some(v) = text(env, variable, EXPECTED)? else {
        return Ok(None);
    };
    match v.trim() {
        "" => Ok(None),
        t => t.parse::<u64>().map(Some).map_err(|_| KnobError {
            variable,
            value: v.clone(),
            expected: EXPECTED,
        }),
    }
}

fn stage_mib(env: &Lookup) -> Result<Option<usize>, KnobError> {
    const VAR: &str = "CUTH_STAGE_MIB";
    const EXPECTED: &str = "a whole number of MiB";
    let Some(v) = text(env, VAR, EXPECTED)? else {
        return Ok(None);
    };
    // The backend counts f64 values: the MiB must fit a usize as bytes.
    match v.parse::<usize>() {
        Ok(mib) if mib.checked_mul(1 << 20).is_some() => Ok(Some(mib)),
        _ => Err(KnobError {
            variable: VAR,
            value: v,
            expected: EXPECTED,
        }),
    }
}

fn schedule(env: &Lookup) -> Result<QdSchedule, KnobError> {
    const VAR: &str = "CUTH_QD_SCHEDULE";
    const EXPECTED: &str = "auto, rows or columns";
    Ok(match text(env, VAR, EXPECTED)?.as_deref() {
        None | Some("auto") => QdSchedule::Auto,
        Some("rows") => QdSchedule::Rows,
        Some("columns") => QdSchedule::Columns,
        Some(other) => {
            return Err(KnobError {
                variable: VAR,
                value: other.to_string(),
                expected: EXPECTED,
            })
        }
    })
}

/// See [`CudaKnobs::kernel_cache`]. Folder names are taken as they are
/// (not UTF-8 included): any path is a valid folder to try.
fn kernel_cache(env: &Lookup) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    if set("CUTH_NO_KERNEL_CACHE").is_some_and(|v| v != "0") {
        return None;
    }
    if let Some(d) = set("CUTH_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = set("XDG_CACHE_HOME") {
        return Some(Path::new(&d).join("cuth"));
    }
    set("HOME").map(|h| Path::new(&h).join(".cache").join("cuth"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knobs(vars: &[(&str, &str)]) -> Result<Knobs, KnobError> {
        Knobs::from_lookup(|k| {
            (vars.iter())
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn nothing_set_is_the_default() {
        assert_eq!(knobs(&[]), Ok(Knobs::default()));
    }

    #[test]
    fn switches_are_on_when_set_to_anything() {
        for v in ["1", "0", ""] {
            let k = knobs(&[
                ("CUTH_CUDA_SYNC", v),
                ("CUTH_PAGEABLE_DOWNLOAD", v),
                ("CUTH_PAGEABLE_UPLOAD", v),
                ("CUTH_HOST_ASSEMBLY", v),
                ("CUTH_NO_GRAPHS", v),
                ("CUTH_PROFILE_SYNC", v),
            ])
            .unwrap();
            assert!(k.cuda.sync_each_launch && k.cuda.host_assembly && k.profile_sync);
            assert!(k.cuda.no_graphs);
            assert!(k.cuda.transfer.pageable_download && k.cuda.transfer.pageable_upload);
        }
    }

    #[test]
    fn schedule_names() {
        let s = |v| knobs(&[("CUTH_QD_SCHEDULE", v)]).map(|k| k.cuda.schedule);
        assert_eq!(s("rows"), Ok(QdSchedule::Rows));
        assert_eq!(s("columns"), Ok(QdSchedule::Columns));
        assert_eq!(s("auto"), Ok(QdSchedule::Auto));
        assert_eq!(s(""), Ok(QdSchedule::Auto));
        let e = s("Rows").unwrap_err();
        assert_eq!(e.variable, "CUTH_QD_SCHEDULE");
        assert!(e.to_string().contains("auto, rows or columns"), "{e}");
    }

    #[test]
    fn memory_caps_are_decimal_bytes() {
        let k = knobs(&[
            ("CUTH_HOST_MEMORY_BYTES", " 320000000\n"),
            ("CUTH_DEVICE_MEMORY_BYTES", "0"),
        ])
        .unwrap();
        assert_eq!(k.memory.host, Some(320_000_000));
        assert_eq!(k.memory.device, Some(0));
        assert_eq!(
            knobs(&[("CUTH_HOST_MEMORY_BYTES", "  ")])
                .unwrap()
                .memory
                .host,
            None
        );
        for bad in ["1e9", "-1", "4 GiB", "18446744073709551616"] {
            let e = knobs(&[("CUTH_DEVICE_MEMORY_BYTES", bad)]).unwrap_err();
            assert_eq!(e.variable, "CUTH_DEVICE_MEMORY_BYTES", "{bad}");
            assert_eq!(e.value, bad);
        }
    }

    #[test]
    fn stage_size_in_mib() {
        let m = |v| knobs(&[("CUTH_STAGE_MIB", v)]).map(|k| k.cuda.transfer.stage_mib);
        assert_eq!(m("128"), Ok(Some(128)));
        assert_eq!(m("0"), Ok(Some(0)));
        assert_eq!(m(""), Ok(None));
        for bad in ["32MiB", " 64", "-8", "99999999999999999999"] {
            assert_eq!(m(bad).unwrap_err().variable, "CUTH_STAGE_MIB", "{bad}");
        }
    }

    #[test]
    fn kernel_cache_folder() {
        let dir = |vars: &[(&str, &str)]| knobs(vars).unwrap().cuda.kernel_cache;
        let home = [("HOME", "/h")];
        assert_eq!(dir(&home), Some(PathBuf::from("/h/.cache/cuth")));
        let xdg = [("HOME", "/h"), ("XDG_CACHE_HOME", "/x")];
        assert_eq!(dir(&xdg), Some(PathBuf::from("/x/cuth")));
        let own = [
            ("HOME", "/h"),
            ("XDG_CACHE_HOME", "/x"),
            ("CUTH_CACHE_DIR", "/c"),
        ];
        assert_eq!(dir(&own), Some(PathBuf::from("/c")));
        let off = [("CUTH_CACHE_DIR", "/c"), ("CUTH_NO_KERNEL_CACHE", "1")];
        assert_eq!(dir(&off), None);
        let not_off = [("CUTH_CACHE_DIR", "/c"), ("CUTH_NO_KERNEL_CACHE", "0")];
        assert_eq!(dir(&not_off), Some(PathBuf::from("/c")));
        let empty = [
            ("HOME", "/h"),
            ("CUTH_CACHE_DIR", ""),
            ("CUTH_NO_KERNEL_CACHE", ""),
        ];
        assert_eq!(dir(&empty), Some(PathBuf::from("/h/.cache/cuth")));
        assert_eq!(dir(&[]), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_value_that_is_not_text_names_its_variable() {
        use std::os::unix::ffi::OsStringExt;
        let e = Knobs::from_lookup(|k| {
            (k == "CUTH_QD_SCHEDULE").then(|| OsString::from_vec(vec![b'r', 0xff]))
        })
        .unwrap_err();
        assert_eq!(e.variable, "CUTH_QD_SCHEDULE");
    }
}
