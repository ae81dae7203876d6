//! The cycle replayed from a recording ([`MultigridOps::mg_record`], a CUDA
//! graph): a V-cycle is some forty small launches whose buffers and
//! arguments never change between applications, so after it has run once
//! on a set of buffers it is recorded on the next application and replayed
//! from then on: the host's launch cost goes, 4–10 % of a transient step
//! on an H100 (BENCHMARKS.md).
//!
//! A recording names the buffers it was made with (the fine matrix, r and
//! z); another set runs the cycle plainly and starts over. Whatever the
//! set-up reallocates ([`Replay::forget`]: the fine pivots when the
//! operator changes, a new hierarchy when the precision rises) drops it.

use crate::backend::mg::MultigridOps;
use crate::backend::BackendError;

/// The buffers a cycle reads and writes: fine matrix, r, z.
pub(super) type Buffers = [usize; 3];

/// Where the recording of one preconditioner stands.
pub(super) enum Replay<R> {
    /// Nothing ran yet, or the set-up changed.
    Fresh,
    /// One plain cycle ran on these buffers.
    Ran(Buffers),
    Recorded(Buffers, R),
    /// The backend does not record.
    Off,
}

impl<R> Replay<R> {
    /// Runs `cycle` on `buffers`: replayed where it was recorded on them,
    /// recorded and replayed on their second use, plain otherwise. A
    /// recording that fails leaves the plain cycle, which reports any real
    /// fault itself.
    pub(super) fn run<B: MultigridOps<Recording = R>>(
        &mut self,
        be: &B,
        buffers: Buffers,
        cycle: &mut dyn FnMut() -> Result<(), BackendError>,
    ) -> Result<(), BackendError> {
        match self {
            Replay::Recorded(b, r) if *b == buffers => return be.mg_replay(r),
            Replay::Ran(b) if *b == buffers => match be.mg_record(cycle) {
                Ok(Some(r)) => {
                    be.mg_replay(&r)?;
                    *self = Replay::Recorded(buffers, r);
                    return Ok(());
                }
                Ok(None) | Err(_) => *self = Replay::Off,
            },
            Replay::Off => {}
            _ => *self = Replay::Ran(buffers),
        }
        cycle()
    }

    /// The set-up reallocated something the cycle reads.
    pub(super) fn forget(&mut self) {
        if !matches!(self, Replay::Off) {
            *self = Replay::Fresh;
        }
    }
}
