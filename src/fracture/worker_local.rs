//! Working memory kept per rayon worker thread rather than per task.

use std::sync::Mutex;

/// One `T` per worker thread of the current rayon pool, made on first use.
///
/// For scratch sized by the body (a word per node or edge): rayon's
/// `map_init` builds one per task, and an event runs tens of tasks per
/// thread, so zeroing the scratch would cost more than the work done in it.
pub(super) struct WorkerLocal<T> {
    slots: Vec<Mutex<Option<T>>>,
}

impl<T> WorkerLocal<T> {
    pub(super) fn new() -> Self {
        Self {
            slots: (0..rayon::current_num_threads())
                .map(|_| Mutex::new(None))
                .collect(),
        }
    }

    /// Runs `f` on this worker's `T`, made by `init` the first time.
    /// Uncontended as long as `f` does not wait on other rayon tasks: only
    /// the worker a slot belongs to takes its lock (threads outside the
    /// pool share slot 0).
    pub(super) fn with<R>(&self, init: impl FnOnce() -> T, f: impl FnOnce(&mut T) -> R) -> R {
        let worker = rayon::current_thread_index().unwrap_or(0) % self.slots.len();
        let mut slot = self.slots[worker]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(slot.get_or_insert_with(init))
    }
}
