//! One background thread running jobs in submission order, urgent ones
//! first: the shape of both the modal-analysis worker
//! ([`crate::fracture::BasisWorker`]) and the deferred fracture checks
//! ([`crate::world::FractureWorker`]).
//!
//! Background threads (these workers, the pools they run their jobs on,
//! the viewer's stress thread) lower their own CPU priority by
//! [`BACKGROUND_NICE`] as they start: on a machine with fewer cores than
//! busy threads, the simulation thread, which must answer every sync
//! within its period, takes the CPU from them, instead of sharing it
//! equally with a fragment's modal analysis and a fracture check's pool.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How much background threads raise their nice value over the thread
/// that started them (at most to 19, the lowest priority). The kernel's
/// fair scheduler weighs nice 0 as 1024 against 110 at nice 10
/// (`sched_prio_to_weight` in the kernel's `core.c`), so a simulation
/// thread sharing a core with one background thread gets about 90 % of
/// it; the background thread still progresses, and a lock it holds is
/// not held for long.
pub const BACKGROUND_NICE: i32 = 10;

/// Raises the calling thread's nice value by [`BACKGROUND_NICE`]
/// (`nice(2)`: on Linux the nice value is the thread's, not the
/// process's, so the session's other threads keep theirs). Lowering one's
/// own priority needs no privilege; a failure is logged and the thread
/// runs on at the priority it has.
pub(crate) fn lower_calling_thread_priority() {
    lower_calling_thread_priority_by(BACKGROUND_NICE);
}

/// Raises the calling thread's nice value by `increment`, as
/// [`lower_calling_thread_priority`] does by [`BACKGROUND_NICE`].
fn lower_calling_thread_priority_by(increment: i32) {
    #[cfg(target_os = "linux")]
    {
        // nice() may return -1 as the new value: errno tells an error.
        // SAFETY: errno is the calling thread's; nice() is a plain system
        // call on the calling thread.
        unsafe {
            *libc::__errno_location() = 0;
            if libc::nice(increment) == -1 && *libc::__errno_location() != 0 {
                let error = std::io::Error::last_os_error();
                tracing::warn!("a background thread keeps its priority: nice: {error}");
            }
        }
    }
}

/// A pool of `threads` threads (rayon's default if `None`) named
/// `name-i` for a background worker's jobs, each thread at background
/// priority ([`BACKGROUND_NICE`]).
pub fn background_pool(
    name: &'static str,
    threads: Option<usize>,
) -> Result<rayon::ThreadPool, rayon::ThreadPoolBuildError> {
    background_pool_below(name, threads, BACKGROUND_NICE)
}

/// [`background_pool`] with its threads' nice value raised by `increment`
/// instead (at least [`BACKGROUND_NICE`]): for work that yields to other
/// background work as well.
pub(crate) fn background_pool_below(
    name: &'static str,
    threads: Option<usize>,
    increment: i32,
) -> Result<rayon::ThreadPool, rayon::ThreadPoolBuildError> {
    let increment = increment.max(BACKGROUND_NICE);
    let mut pool = rayon::ThreadPoolBuilder::new()
        .thread_name(move |i| format!("{name}-{i}"))
        .start_handler(move |_| lower_calling_thread_priority_by(increment));
    if let Some(threads) = threads {
        pool = pool.num_threads(threads);
    }
    pool.build()
}

/// How long dropping a [`Worker`] waits for the job in hand before it
/// leaves the thread to finish it alone.
pub(crate) const DROP_WAIT: Duration = Duration::from_millis(500);

/// A thread applying one function to each submitted job and sending back
/// its result. Dropping it discards the jobs still queued and waits for
/// the job in hand at most [`DROP_WAIT`]: a session's end does not wait for
/// a fragment's modal analysis (seconds for a 40k-tet piece) that no one
/// will use. A job left running finishes alone, or ends with the process;
/// what it writes to disk is written atomically (the modal cache).
pub(crate) struct Worker<J, R> {
    jobs: Option<Sender<Message<J>>>,
    results: Receiver<R>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// Disconnected once the thread has ended.
    ended: Receiver<()>,
}

/// What the thread is sent: a job, or a value to drop.
enum Message<J> {
    Run(J),
    Discard(Box<dyn Send>),
}

impl<J: Send + 'static, R: Send + 'static> Worker<J, R> {
    /// Starts the thread `name`, which runs `run` on each job in
    /// submission order.
    pub(crate) fn spawn(
        name: &str,
        run: impl FnMut(J) -> R + Send + 'static,
    ) -> std::io::Result<Self> {
        Self::spawn_prioritised(name, run, |_: &J| false)
    }

    /// Starts the thread `name`, which runs `run` on each job: of the jobs
    /// queued when it takes the next, the first `urgent` one, else the
    /// first. Values to discard are dropped as they are taken from the
    /// channel, before the next job.
    pub(crate) fn spawn_prioritised(
        name: &str,
        mut run: impl FnMut(J) -> R + Send + 'static,
        urgent: impl Fn(&J) -> bool + Send + 'static,
    ) -> std::io::Result<Self> {
        let (job_sender, jobs) = channel::<Message<J>>();
        let (result_sender, results) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let (ending, ended) = channel::<()>();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                // Dropped when the thread ends, however it ends.
                let _ending = ending;
                lower_calling_thread_priority();
                let mut queued = VecDeque::new();
                let take = |message: Message<J>, queued: &mut VecDeque<J>| match message {
                    Message::Run(job) => queued.push_back(job),
                    Message::Discard(value) => drop(value),
                };
                loop {
                    if queued.is_empty() {
                        // Nothing to run: wait for the next message, or end
                        // once the sender is dropped.
                        match jobs.recv() {
                            Ok(message) => take(message, &mut queued),
                            Err(_) => break,
                        }
                    }
                    for message in jobs.try_iter() {
                        take(message, &mut queued);
                    }
                    if stopped.load(Ordering::Relaxed) {
                        break;
                    }
                    let next = queued.iter().position(&urgent).unwrap_or(0);
                    let Some(job) = queued.remove(next) else {
                        continue;
                    };
                    if result_sender.send(run(job)).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Self {
            jobs: Some(job_sender),
            results,
            stop,
            thread: Some(thread),
            ended,
        })
    }

    /// Queues `job`; returns it back if the thread has stopped.
    pub(crate) fn submit(&self, job: J) -> Result<(), J> {
        match &self.jobs {
            Some(jobs) => jobs.send(Message::Run(job)).map_err(|e| match e.0 {
                Message::Run(job) => job,
                // A failed send returns the message it was given.
                Message::Discard(_) => unreachable!("a job was sent"),
            }),
            None => Err(job),
        }
    }

    /// Drops `value` on the thread, after the job in hand, instead of on
    /// the caller's: freeing a fragment's modal basis took 10–13 ms, longer
    /// than a sync period (benches/README.md). Dropped here if the thread
    /// has stopped.
    pub(crate) fn discard(&self, value: impl Send + 'static) {
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send(Message::Discard(Box::new(value)));
        }
    }

    /// The results finished so far, without waiting.
    pub(crate) fn finished(&self) -> impl Iterator<Item = R> + '_ {
        self.results.try_iter()
    }

    /// The next result, waiting at most `timeout`.
    pub(crate) fn wait(&self, timeout: Duration) -> Option<R> {
        self.results.recv_timeout(timeout).ok()
    }

    /// The next result, waiting for it however long it takes; `None` once
    /// the thread has ended and every result was taken.
    pub(crate) fn next(&self) -> Option<R> {
        self.results.recv().ok()
    }
}

impl<J, R> std::fmt::Debug for Worker<J, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.thread.as_ref().and_then(|t| t.thread().name());
        f.debug_struct("Worker").field("thread", &name).finish()
    }
}

impl<J, R> Worker<J, R> {
    /// Tells the thread to end after the job in hand, discarding the jobs
    /// queued.
    pub(crate) fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.jobs.take();
    }

    /// Stops the thread ([`Self::stop`]) and waits for it to end until
    /// `deadline`, then leaves it to finish alone.
    pub(crate) fn end_by(&mut self, deadline: Instant) {
        self.stop();
        let Some(thread) = self.thread.take() else {
            return;
        };
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.ended.recv_timeout(wait) {
            // Nothing is ever sent: the thread has ended.
            Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                let _ = thread.join();
            }
            // Dropping the handle detaches the thread.
            Err(RecvTimeoutError::Timeout) => {
                tracing::debug!(
                    thread = thread.thread().name(),
                    "left to finish its job in hand"
                );
            }
        }
    }
}

impl<J, R> Drop for Worker<J, R> {
    fn drop(&mut self) {
        self.end_by(Instant::now() + DROP_WAIT);
    }
}

#[cfg(test)]
mod tests {
    use super::Worker;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    /// Records the name of the thread that drops it.
    struct DroppedOn(Arc<Mutex<Option<String>>>);

    impl Drop for DroppedOn {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = std::thread::current().name().map(str::to_owned);
        }
    }

    #[test]
    fn a_discarded_value_is_dropped_on_the_workers_thread_in_order() {
        let worker = Worker::spawn("tessera-test-worker", |x: u32| x + 1).expect("a thread");
        let dropped_on = Arc::new(Mutex::new(None));
        worker.discard(DroppedOn(Arc::clone(&dropped_on)));
        // Messages are taken in order: once this job's result is back, the
        // value sent before it has been dropped.
        worker.submit(1).expect("the thread runs");
        assert_eq!(worker.wait(Duration::from_secs(10)), Some(2));
        assert_eq!(
            dropped_on.lock().unwrap().as_deref(),
            Some("tessera-test-worker")
        );
    }

    #[test]
    fn an_urgent_job_runs_before_the_jobs_queued_ahead_of_it() {
        use std::sync::mpsc::channel;
        let (started, job_in_hand) = channel();
        let (release, gate) = channel::<()>();
        let gate = Mutex::new(gate);
        let worker = Worker::spawn_prioritised(
            "tessera-test-worker",
            move |x: u32| {
                if x == 1 {
                    started.send(()).unwrap();
                    gate.lock().unwrap().recv().unwrap();
                }
                x
            },
            |&x: &u32| x >= 10,
        )
        .expect("a thread");
        worker.submit(1).expect("the thread runs");
        job_in_hand.recv_timeout(Duration::from_secs(10)).unwrap();
        for x in [2, 3, 10, 4, 11] {
            worker.submit(x).expect("the thread runs");
        }
        release.send(()).unwrap();
        let order: Vec<u32> = (0..6)
            .map(|_| worker.wait(Duration::from_secs(10)).expect("a result"))
            .collect();
        // The job in hand finishes; then the urgent ones in their order,
        // then the others in theirs.
        assert_eq!(order, [1, 10, 11, 2, 3, 4]);
    }

    #[test]
    fn dropping_a_worker_does_not_wait_for_a_long_job_in_hand() {
        use std::sync::mpsc::channel;
        let (started, job_in_hand) = channel();
        let (release, gate) = channel::<()>();
        let gate = Mutex::new(gate);
        let worker = Worker::spawn("tessera-test-worker", move |()| {
            started.send(()).unwrap();
            // Held until the test releases it, after the drop.
            let _ = gate.lock().unwrap().recv();
        })
        .expect("a thread");
        worker.submit(()).expect("the thread runs");
        job_in_hand.recv_timeout(Duration::from_secs(10)).unwrap();
        let (dropped, drop_returned) = channel();
        std::thread::spawn(move || {
            drop(worker);
            dropped.send(()).unwrap();
        });
        // A drop that joined the thread would wait for the release.
        let returned = drop_returned.recv_timeout(Duration::from_secs(30));
        release.send(()).unwrap();
        assert!(returned.is_ok(), "the drop waited for the job in hand");
    }

    /// The calling thread's nice value.
    #[cfg(target_os = "linux")]
    fn nice() -> i32 {
        // SAFETY: a plain system call on the calling thread (`who` 0 is
        // the calling thread on Linux).
        unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn background_threads_run_below_the_thread_that_started_them() {
        let before = nice();
        let expected = (before + super::BACKGROUND_NICE).min(19);
        let worker = Worker::spawn("tessera-test-worker", |_: ()| nice()).expect("a thread");
        worker.submit(()).expect("the thread runs");
        assert_eq!(worker.wait(Duration::from_secs(10)), Some(expected));
        let pool = super::background_pool("tessera-test-pool", Some(2)).expect("a pool");
        assert_eq!(pool.broadcast(|_| nice()), [expected, expected]);
        let lower =
            super::background_pool_below("tessera-test-lower", Some(1), 15).expect("a pool");
        assert_eq!(lower.broadcast(|_| nice()), [(before + 15).min(19)]);
        // Never above background priority.
        let higher =
            super::background_pool_below("tessera-test-higher", Some(1), 2).expect("a pool");
        assert_eq!(higher.broadcast(|_| nice()), [expected]);
        // The calling thread keeps its priority.
        assert_eq!(nice(), before);
    }
}
