//! One background thread running jobs in submission order: the shape of
//! both the modal-analysis worker ([`crate::fracture::BasisWorker`]) and
//! the deferred fracture checks ([`crate::world::FractureWorker`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A thread applying one function to each submitted job and sending back
/// its result. Dropping it lets the thread finish the job in hand and
/// discards the ones still queued.
pub(crate) struct Worker<J, R> {
    jobs: Option<Sender<J>>,
    results: Receiver<R>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl<J: Send + 'static, R: Send + 'static> Worker<J, R> {
    /// Starts the thread `name`, which runs `run` on each job.
    pub(crate) fn spawn(
        name: &str,
        mut run: impl FnMut(J) -> R + Send + 'static,
    ) -> std::io::Result<Self> {
        let (job_sender, jobs) = channel::<J>();
        let (result_sender, results) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                for job in jobs {
                    if stopped.load(Ordering::Relaxed) {
                        break;
                    }
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
            Some(jobs) => jobs.send(job).map_err(|e| e.0),
            None => Err(job),
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
