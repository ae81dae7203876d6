//! The calling thread as a member of a thread pool. A stepping session at
//! 64² runs some 45 k cells a step: its parallel loops are short, and a
//! loop started from a thread outside rayon's pool is handed to the pool
//! while the caller sleeps until it is done, which cost about a third of a
//! session's time on the 2-core CPU. Run inside [`on_this_thread`], the
//! caller is one of the pool's workers and takes part in every loop.

thread_local! {
    /// This thread's pool (rayon's `use_current_thread`): the thread and
    /// as many others as the global pool has, less one. `None` where one
    /// cannot be built (the thread already belongs to a pool).
    static POOL: Option<rayon::ThreadPool> = rayon::ThreadPoolBuilder::new()
        .num_threads(rayon::current_num_threads())
        .use_current_thread()
        .build()
        .ok();
}

/// A value `install` moves only in name.
struct Here<T>(T);

// SAFETY: `ThreadPool::install` runs its closure in place when the calling
// thread is one of the pool's workers, and `POOL` made this thread one of
// its pool's workers (`use_current_thread`) when it was built on it; the
// closure and its result therefore never leave this thread.
unsafe impl<T> Send for Here<T> {}

impl<T> Here<T> {
    /// The value (a method, so that a closure captures the whole wrapper
    /// rather than its field).
    fn get(self) -> T {
        self.0
    }
}

/// `f` run on this thread as a member of this thread's pool, or as is
/// where there is none. Long-running loops (a server's) may block inside:
/// the pool's other threads only wait.
pub fn on_this_thread<R>(f: impl FnOnce() -> R) -> R {
    POOL.with(|pool| match pool {
        Some(pool) => {
            let f = Here(f);
            pool.install(move || Here(f.get()())).get()
        }
        None => f(),
    })
}
