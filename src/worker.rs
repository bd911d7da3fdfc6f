//! Background threads running jobs in submission order, urgent ones
//! first: the shape of both the modal-analysis worker
//! ([`crate::fracture::BasisWorker`]) and the deferred fracture checks
//! ([`crate::world::FractureWorker`]). A worker has one thread, or two
//! lanes over one queue, the second taking the urgent jobs queued for the
//! first while that one has a job in hand.
//!
//! Background threads (these workers, the pools they run their jobs on,
//! the viewer's stress thread) lower their own CPU priority by
//! [`BACKGROUND_NICE`] as they start: on a machine with fewer cores than
//! busy threads, the simulation thread, which must answer every sync
//! within its period, takes the CPU from them, instead of sharing it
//! equally with a fragment's modal analysis and a fracture check's pool.
//! Work that someone waits for can hold a [`YieldGate`], at which the
//! threads of other work pause ([`yield_to_urgent_work`]) while it runs.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Condvar, Mutex};
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

/// Longest a thread waits at one [`yield_to_urgent_work`]: it then goes on
/// even if urgent work still runs, so that background work is slowed by
/// urgent work, never stopped by it.
pub(crate) const MAX_YIELD: Duration = Duration::from_secs(1);

/// Urgent work that threads of other work pause for, at their next safe
/// point, while it runs: a lower nice value alone does not give it the
/// machine, since the scheduler runs the other threads on the cores the
/// urgent ones leave idle, where they still take the memory bandwidth
/// that a fracture check's solves are bound by.
#[derive(Debug, Default)]
pub(crate) struct YieldGate {
    /// Urgent jobs running: read at every safe point, without a lock.
    running: AtomicUsize,
    /// Taken to wait for, and to announce, the end of the last one.
    waiting: Mutex<()>,
    /// Notified when the last one ends.
    cleared: Condvar,
}

/// An urgent job's hold on a [`YieldGate`], released on drop.
pub(crate) struct UrgentWork<'a>(&'a YieldGate);

impl YieldGate {
    /// Marks an urgent job as running until the returned hold is dropped.
    pub(crate) fn enter(&self) -> UrgentWork<'_> {
        self.running.fetch_add(1, Ordering::SeqCst);
        UrgentWork(self)
    }

    /// Makes the threads of `pool` pause at [`yield_to_urgent_work`] while
    /// urgent work holds this gate, each from when it is next free: a
    /// thread busy now is not waited for.
    pub(crate) fn yield_on(self: &Arc<Self>, pool: &rayon::ThreadPool) {
        let gate = Arc::clone(self);
        pool.spawn_broadcast(move |_| {
            YIELDS_TO.with(|yields_to| *yields_to.borrow_mut() = Some(Arc::clone(&gate)));
        });
    }

    /// Waits while urgent work runs, at most `longest`.
    fn wait(&self, longest: Duration) {
        if self.running.load(Ordering::Relaxed) == 0 {
            return;
        }
        let deadline = Instant::now() + longest;
        // A unit has no invariant a panic could break.
        let mut guard = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        while self.running.load(Ordering::SeqCst) > 0 {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            guard = self
                .cleared
                .wait_timeout(guard, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Drop for UrgentWork<'_> {
    fn drop(&mut self) {
        // Under the lock, so that a thread between its check and its wait
        // cannot miss the notification.
        let _guard = self.0.waiting.lock().unwrap_or_else(|p| p.into_inner());
        if self.0.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.cleared.notify_all();
        }
    }
}

thread_local! {
    /// The gate the calling thread yields at ([`YieldGate::yield_on`]).
    static YIELDS_TO: std::cell::RefCell<Option<Arc<YieldGate>>> =
        const { std::cell::RefCell::new(None) };
}

/// A safe point of long work: if the calling thread yields to urgent work
/// ([`YieldGate::yield_on`]) and some runs, waits until it ends (at most
/// [`MAX_YIELD`]). Call it where the thread holds no lock another thread
/// may need. Elsewhere it returns at once (a thread-local read and, on a
/// yielding thread, an atomic load); what the work computes does not
/// depend on it, only when.
pub(crate) fn yield_to_urgent_work() {
    YIELDS_TO.with(|gate| {
        if let Some(gate) = gate.borrow().as_ref() {
            gate.wait(MAX_YIELD);
        }
    });
}

/// How long dropping a [`Worker`] waits for the job in hand before it
/// leaves the thread to finish it alone.
pub(crate) const DROP_WAIT: Duration = Duration::from_millis(500);

/// How often [`Worker::next`] looks whether its threads have ended while
/// it waits for a result.
const ENDED_POLL: Duration = Duration::from_millis(50);

/// Which of a worker's threads a job is queued for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lane {
    /// The first thread, the only one unless a second lane is added.
    First,
    /// The thread of [`Worker::add_second_lane`].
    Second,
}

/// Threads applying one function to each submitted job and sending back
/// its result: one thread, or two lanes over one queue
/// ([`Worker::add_second_lane`]). Dropping it discards the jobs still
/// queued and waits for the job in hand at most [`DROP_WAIT`]: a
/// session's end does not wait for a fragment's modal analysis (seconds
/// for a 40k-tet piece) that no one will use. A job left running finishes
/// alone, or ends with the process; what it writes to disk is written
/// atomically (the modal cache).
pub(crate) struct Worker<J, R> {
    queue: Arc<Queue<J>>,
    urgent: Arc<Urgency<J>>,
    results: Receiver<R>,
    /// Cloned for a second lane's thread.
    results_sender: Sender<R>,
    threads: Vec<WorkerThread>,
}

/// Whether a queued job is to run before the others.
type Urgency<J> = dyn Fn(&J) -> bool + Send + Sync;

/// A worker's thread and the channel that disconnects when it ends.
struct WorkerThread {
    handle: Option<JoinHandle<()>>,
    ended: Receiver<()>,
}

/// The jobs queued for a worker's threads and the values to drop.
struct Queue<J> {
    state: Mutex<QueueState<J>>,
    changed: Condvar,
}

struct QueueState<J> {
    jobs: VecDeque<(Lane, J)>,
    discards: Vec<Box<dyn Send>>,
    stopped: bool,
    /// Whether a thread serves [`Lane::Second`].
    second_lane: bool,
}

impl<J> Queue<J> {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState<J>> {
        // A panic while the queue is held leaves whole entries only.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
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
    /// first. Values to discard are dropped before the next job is taken.
    pub(crate) fn spawn_prioritised(
        name: &str,
        run: impl FnMut(J) -> R + Send + 'static,
        urgent: impl Fn(&J) -> bool + Send + Sync + 'static,
    ) -> std::io::Result<Self> {
        let (results_sender, results) = channel();
        let mut worker = Self {
            queue: Arc::new(Queue {
                state: Mutex::new(QueueState {
                    jobs: VecDeque::new(),
                    discards: Vec::new(),
                    stopped: false,
                    second_lane: false,
                }),
                changed: Condvar::new(),
            }),
            urgent: Arc::new(urgent),
            results,
            results_sender,
            threads: Vec::new(),
        };
        worker.start(name, Lane::First, run)?;
        Ok(worker)
    }

    /// Adds a second thread `name` over the same queue, which runs `run`
    /// on the jobs submitted to [`Lane::Second`] in submission order and,
    /// when there are none, on the first job queued for the first thread
    /// that is urgent: a job that becomes urgent while the first thread
    /// has another in hand need not wait for it. The first thread then
    /// takes its own jobs in submission order, urgent or not (the second
    /// takes the urgent ones as soon as it is free).
    pub(crate) fn add_second_lane(
        &mut self,
        name: &str,
        run: impl FnMut(J) -> R + Send + 'static,
    ) -> std::io::Result<()> {
        self.start(name, Lane::Second, run)?;
        self.queue.lock().second_lane = true;
        self.queue.changed.notify_all();
        Ok(())
    }

    fn start(
        &mut self,
        name: &str,
        lane: Lane,
        mut run: impl FnMut(J) -> R + Send + 'static,
    ) -> std::io::Result<()> {
        let queue = Arc::clone(&self.queue);
        let urgent = Arc::clone(&self.urgent);
        let results = self.results_sender.clone();
        let (ending, ended) = channel::<()>();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                // Dropped when the thread ends, however it ends.
                let _ending = ending;
                lower_calling_thread_priority();
                while let Some(job) = next_job(&queue, lane, &*urgent) {
                    if results.send(run(job)).is_err() {
                        break;
                    }
                }
            })?;
        self.threads.push(WorkerThread {
            handle: Some(handle),
            ended,
        });
        Ok(())
    }
}

impl<J, R> Worker<J, R> {
    /// Queues `job` for the first thread; returns it back if the worker
    /// has stopped.
    pub(crate) fn submit(&self, job: J) -> Result<(), J> {
        self.submit_to(Lane::First, job)
    }

    /// Queues `job` for `lane`'s thread (the first if there is no second);
    /// returns it back if the worker has stopped.
    pub(crate) fn submit_to(&self, lane: Lane, job: J) -> Result<(), J> {
        let mut state = self.queue.lock();
        if state.stopped {
            return Err(job);
        }
        let lane = if state.second_lane { lane } else { Lane::First };
        state.jobs.push_back((lane, job));
        drop(state);
        self.queue.changed.notify_all();
        Ok(())
    }

    /// Tells the threads that a queued job may have become urgent.
    pub(crate) fn nudge(&self) {
        self.queue.changed.notify_all();
    }

    /// Drops `value` on a worker's thread, after the job in hand, instead
    /// of on the caller's: freeing a fragment's modal basis took 10–13 ms,
    /// longer than a sync period (benches/README.md). Dropped here if the
    /// worker has stopped.
    pub(crate) fn discard(&self, value: impl Send + 'static) {
        let mut state = self.queue.lock();
        if state.stopped {
            drop(state);
            drop(value);
            return;
        }
        state.discards.push(Box::new(value));
        drop(state);
        self.queue.changed.notify_all();
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
    /// every thread has ended and every result was taken.
    pub(crate) fn next(&self) -> Option<R> {
        loop {
            match self.results.recv_timeout(ENDED_POLL) {
                Ok(result) => return Some(result),
                Err(RecvTimeoutError::Disconnected) => return None,
                Err(RecvTimeoutError::Timeout) => {
                    let ended = |t: &WorkerThread| {
                        matches!(t.ended.try_recv(), Err(TryRecvError::Disconnected))
                    };
                    if self.threads.iter().all(ended) {
                        return self.results.try_recv().ok();
                    }
                }
            }
        }
    }

    /// Tells the threads to end after their jobs in hand, discarding the
    /// jobs queued.
    pub(crate) fn stop(&mut self) {
        self.queue.lock().stopped = true;
        self.queue.changed.notify_all();
    }

    /// Stops the threads ([`Self::stop`]) and waits for them to end until
    /// `deadline`, then leaves them to finish alone.
    pub(crate) fn end_by(&mut self, deadline: Instant) {
        self.stop();
        for thread in &mut self.threads {
            let Some(handle) = thread.handle.take() else {
                continue;
            };
            let wait = deadline.saturating_duration_since(Instant::now());
            match thread.ended.recv_timeout(wait) {
                // Nothing is ever sent: the thread has ended.
                Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                    let _ = handle.join();
                }
                // Dropping the handle detaches the thread.
                Err(RecvTimeoutError::Timeout) => {
                    tracing::debug!(
                        thread = handle.thread().name(),
                        "left to finish its job in hand"
                    );
                }
            }
        }
    }
}

impl<J, R> std::fmt::Debug for Worker<J, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<_> = self
            .threads
            .iter()
            .filter_map(|t| t.handle.as_ref()?.thread().name())
            .collect();
        f.debug_struct("Worker").field("threads", &names).finish()
    }
}

impl<J, R> Drop for Worker<J, R> {
    fn drop(&mut self) {
        self.end_by(Instant::now() + DROP_WAIT);
    }
}

/// The next job `lane`'s thread is to run, waiting for one; `None` once
/// the worker is stopped. Values to discard, and the jobs of a stopped
/// worker, are dropped here, on the worker's thread, outside the lock.
fn next_job<J>(queue: &Queue<J>, lane: Lane, urgent: &Urgency<J>) -> Option<J> {
    let mut state = queue.lock();
    loop {
        if !state.discards.is_empty() || (state.stopped && !state.jobs.is_empty()) {
            let discards = std::mem::take(&mut state.discards);
            let dropped = if state.stopped {
                std::mem::take(&mut state.jobs)
            } else {
                VecDeque::new()
            };
            drop(state);
            drop(discards);
            drop(dropped);
            state = queue.lock();
            continue;
        }
        if state.stopped {
            return None;
        }
        let second_lane = state.second_lane;
        let own = |(l, _): &(Lane, J)| *l == lane;
        let urgent_first = |(l, j): &(Lane, J)| *l == Lane::First && urgent(j);
        let at = match lane {
            Lane::First if second_lane => state.jobs.iter().position(own),
            Lane::First => state
                .jobs
                .iter()
                .position(urgent_first)
                .or_else(|| state.jobs.iter().position(own)),
            Lane::Second => state
                .jobs
                .iter()
                .position(own)
                .or_else(|| state.jobs.iter().position(urgent_first)),
        };
        if let Some((_, job)) = at.and_then(|at| state.jobs.remove(at)) {
            return Some(job);
        }
        state = queue.changed.wait(state).unwrap_or_else(|p| p.into_inner());
    }
}
#[cfg(test)]
mod tests {
    use super::{Lane, Worker};
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

    /// A job queued for the first thread that becomes urgent while that
    /// thread has another in hand runs on the second lane at once; the
    /// second lane's own jobs run there; the first thread then takes its
    /// own in order.
    #[test]
    fn a_job_become_urgent_runs_on_the_second_lane_beside_the_job_in_hand() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::mpsc::channel;
        type Job = (u32, Arc<AtomicBool>);
        let (started, job_in_hand) = channel();
        let (release, gate) = channel::<()>();
        let gate = Mutex::new(gate);
        let run = move |(x, _): Job| {
            if x == 1 {
                started.send(()).unwrap();
                gate.lock().unwrap().recv().unwrap();
            }
            (x, std::thread::current().name().map(str::to_owned))
        };
        let mut worker =
            Worker::spawn_prioritised("tessera-test-first", run, |(_, urgent): &Job| {
                urgent.load(Ordering::Relaxed)
            })
            .expect("a thread");
        worker
            .add_second_lane("tessera-test-second", |(x, _): Job| {
                (x, std::thread::current().name().map(str::to_owned))
            })
            .expect("a thread");
        let job = |x: u32| (x, Arc::new(AtomicBool::new(false)));
        worker.submit(job(1)).expect("running");
        job_in_hand.recv_timeout(Duration::from_secs(10)).unwrap();
        let (two, three) = (job(2), job(3));
        let becomes_urgent = Arc::clone(&three.1);
        worker.submit(two).expect("running");
        worker.submit(three).expect("running");
        worker.submit_to(Lane::Second, job(4)).expect("running");
        let second = |x: u32| (x, Some("tessera-test-second".to_owned()));
        let first = |x: u32| (x, Some("tessera-test-first".to_owned()));
        assert_eq!(worker.wait(Duration::from_secs(10)), Some(second(4)));
        becomes_urgent.store(true, Ordering::Relaxed);
        worker.nudge();
        assert_eq!(worker.wait(Duration::from_secs(10)), Some(second(3)));
        release.send(()).unwrap();
        assert_eq!(worker.wait(Duration::from_secs(10)), Some(first(1)));
        assert_eq!(worker.wait(Duration::from_secs(10)), Some(first(2)));
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

    /// Runs `yield_to_urgent_work` on `pool`, reporting before and after.
    fn yield_on_pool(
        pool: &rayon::ThreadPool,
    ) -> (std::sync::mpsc::Receiver<()>, std::sync::mpsc::Receiver<()>) {
        let (arrived, arrival) = std::sync::mpsc::channel();
        let (passed, passage) = std::sync::mpsc::channel();
        pool.spawn(move || {
            arrived.send(()).unwrap();
            super::yield_to_urgent_work();
            passed.send(()).unwrap();
        });
        (arrival, passage)
    }

    /// A pool of one thread, yielding to `gate` if given.
    fn one_thread(gate: Option<&Arc<super::YieldGate>>) -> rayon::ThreadPool {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        if let Some(gate) = gate {
            gate.yield_on(&pool);
            // Broadcasts run in order on each thread: once this one has, so
            // has the gate's.
            pool.broadcast(|_| ());
        }
        pool
    }

    #[test]
    fn threads_yielding_to_urgent_work_wait_while_it_runs_and_others_do_not() {
        let gate = Arc::new(super::YieldGate::default());
        let yielding = one_thread(Some(&gate));
        let other = one_thread(None);
        let long = Duration::from_secs(30);

        // No urgent work: the safe point passes.
        let (arrival, passage) = yield_on_pool(&yielding);
        arrival.recv_timeout(long).unwrap();
        passage.recv_timeout(long).unwrap();

        let urgent = gate.enter();
        let (arrival, passage) = yield_on_pool(&yielding);
        arrival.recv_timeout(long).unwrap();
        // A thread of a pool that does not yield goes on meanwhile.
        let (other_arrival, other_passage) = yield_on_pool(&other);
        other_arrival.recv_timeout(long).unwrap();
        other_passage.recv_timeout(long).unwrap();
        // The yielding thread waits until the urgent work ends (here well
        // within its longest wait).
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(
            passage.try_recv(),
            Err(std::sync::mpsc::TryRecvError::Empty)
        );
        drop(urgent);
        passage.recv_timeout(long).unwrap();
    }

    #[test]
    fn a_yielding_thread_waits_for_urgent_work_at_most_its_longest_wait() {
        let gate = Arc::new(super::YieldGate::default());
        let yielding = one_thread(Some(&gate));
        let _urgent = gate.enter();
        let started = std::time::Instant::now();
        let (arrival, passage) = yield_on_pool(&yielding);
        arrival.recv_timeout(Duration::from_secs(30)).unwrap();
        passage.recv_timeout(Duration::from_secs(30)).unwrap();
        assert!(started.elapsed() >= super::MAX_YIELD);
    }
}
