//! One background thread running jobs in submission order, urgent ones
//! first: the shape of both the modal-analysis worker
//! ([`crate::fracture::BasisWorker`]) and the deferred fracture checks
//! ([`crate::world::FractureWorker`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A thread applying one function to each submitted job and sending back
/// its result. Dropping it lets the thread finish the job in hand and
/// discards the ones still queued.
pub(crate) struct Worker<J, R> {
    jobs: Option<Sender<Message<J>>>,
    results: Receiver<R>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
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
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
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

impl<J, R> Drop for Worker<J, R> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
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
}
