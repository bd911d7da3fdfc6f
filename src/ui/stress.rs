//! The viewer's stress maps, evaluated on a thread of their own.
//!
//! A map costs an evaluation of every element of a body at every sample of
//! an impact (tens to hundreds of milliseconds for a 10 800-tet tile); on
//! the pump's thread it would hold back every frame behind it. The pump
//! hands a [`StressJob`] to the [`StressWorker`] and takes the finished
//! [`StressMap`]s at its next rounds, so frames keep their pace while maps
//! are made. The worker's queue holds at most
//! [`MAX_STRESS_JOBS`](super::model::MAX_STRESS_JOBS) jobs, which the model
//! never exceeds.

use crate::fracture::{ImpactStress, StressField};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;

/// What a map is made from: an impact not evaluated yet, or the field of
/// one evaluated before (a broken body's, passed to its fragments; it
/// holds neither the body's mesh nor its basis).
#[derive(Debug, Clone)]
pub(super) enum Stress {
    Impact(ImpactStress),
    Field(Arc<StressField>),
}

/// One impact to evaluate at the surface points of the bodies it paints.
#[derive(Debug)]
pub(super) struct StressJob {
    /// The model's run when the job was made: a map from before a reset is
    /// dropped.
    pub(super) run: u64,
    /// The body whose impact this is (the struck body, or the broken
    /// parent of the fragments it paints).
    pub(super) key: u32,
    pub(super) stress: Stress,
    /// Every body's points, body after body.
    pub(super) points_m: Vec<[f32; 3]>,
    /// The bodies, with how many of the points are theirs.
    pub(super) bodies: Vec<(u32, usize)>,
}

/// A finished job: σ₁/R_c at each body's points.
#[derive(Debug)]
pub(super) struct StressMap {
    pub(super) run: u64,
    pub(super) key: u32,
    /// The impact's field, for the bodies' fragments to inherit.
    pub(super) field: Arc<StressField>,
    pub(super) bodies: Vec<(u32, Vec<f32>)>,
}

/// The thread that evaluates the maps. It ends once the worker is dropped
/// and its current job is done; nobody waits for it.
pub(super) struct StressWorker {
    jobs: SyncSender<StressJob>,
    maps: Receiver<StressMap>,
    thread: std::thread::JoinHandle<()>,
}

impl StressWorker {
    /// Starts the thread, with room for `queue` jobs.
    pub(super) fn spawn(queue: usize) -> std::io::Result<Self> {
        let (jobs, job_queue) = mpsc::sync_channel::<StressJob>(queue);
        let (map_sender, maps) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("tessera-ui-stress".into())
            .spawn(move || {
                crate::worker::lower_calling_thread_priority();
                while let Ok(job) = job_queue.recv() {
                    if map_sender.send(evaluate(job)).is_err() {
                        return;
                    }
                }
            })?;
        Ok(Self { jobs, maps, thread })
    }

    /// Queues `job`. The queue is never full (the model has at most
    /// [`MAX_STRESS_JOBS`](super::model::MAX_STRESS_JOBS) jobs out); if
    /// the thread has ended the job is dropped, and [`Self::ended`] says
    /// so.
    pub(super) fn submit(&self, job: StressJob) {
        let _ = self.jobs.try_send(job);
    }

    /// Whether the thread has ended (it panicked: while the worker lives,
    /// its thread waits for jobs), leaving its jobs undone.
    pub(super) fn ended(&self) -> bool {
        self.thread.is_finished()
    }

    /// A finished map, if there is one.
    pub(super) fn take(&self) -> Option<StressMap> {
        self.maps.try_recv().ok()
    }
}

/// What the thread does with a job.
pub(super) fn evaluate(job: StressJob) -> StressMap {
    let field = match job.stress {
        Stress::Impact(impact) => Arc::new(impact.field()),
        Stress::Field(field) => field,
    };
    let mut ratios = field.ratios_at(&job.points_m).into_iter();
    let bodies = job
        .bodies
        .into_iter()
        .map(|(body, points)| {
            // Three decimals: the colour map shows no more.
            let ratio = ratios
                .by_ref()
                .take(points)
                .map(|r| (r * 1000.0).round() / 1000.0)
                .collect();
            (body, ratio)
        })
        .collect();
    StressMap {
        run: job.run,
        key: job.key,
        field,
        bodies,
    }
}
