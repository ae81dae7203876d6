//! Which command a transaction commits for: the name its manifest records
//! (see `manifest`), or none for outputs that are plain reports.

/// The kind of run a transaction commits. A commit of any kind with a
/// manifest replaces the previous run's files whole, whichever command
/// wrote them (a `topopt` after a `solve` into one `--out` leaves only the
/// topopt's files, and the user's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owned {
    /// `solve` and `transient`.
    Thermal,
    /// `topopt`.
    Topopt,
    /// `sweep`.
    Sweep,
    /// No manifest, nothing removed: benchmark reports and imported stacks,
    /// a fixed set of names written beside whatever is there.
    Nothing,
}

impl Owned {
    /// The command the manifest names; `None` for [`Owned::Nothing`].
    pub fn command(self) -> Option<&'static str> {
        match self {
            Owned::Thermal => Some(match std::env::args().nth(1).as_deref() {
                Some("transient") => "transient",
                _ => "solve",
            }),
            Owned::Topopt => Some("topopt"),
            Owned::Sweep => Some("sweep"),
            Owned::Nothing => None,
        }
    }
}
