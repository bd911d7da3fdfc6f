//! Modal analyses of large fragments, computed on a background thread so
//! that the caller (the simulation loop) never waits for an eigensolve.

use crate::config::Material;
use crate::mesh::TetMesh;
use crate::modal::{analyse, EigenSettings, ModalBasis, ModalCache, ModalError};
use crate::worker::Worker;
use std::time::{Duration, Instant};

/// A modal analysis to run: usually of a fragment's intact part
/// ([`super::BreakableBody::own_basis_job`]).
#[derive(Debug, Clone)]
pub struct BasisJob {
    /// The caller's name for the job (e.g. a fragment's body id).
    pub key: u64,
    /// The mesh to analyse.
    pub mesh: TetMesh,
    /// Its material.
    pub material: Material,
    /// How many modes, and the solver's settings.
    pub settings: EigenSettings,
    /// For each tet of `mesh`, the tet of the body it was cut from (empty
    /// for a mesh of its own).
    pub parent_tets: Vec<u32>,
}

impl BasisJob {
    /// Runs the analysis on `threads` (`cache` as for [`analyse`];
    /// `on_solve` is told the solve count) and prepares the basis's static
    /// correction: a basis loaded from the cache has no factor of
    /// `K − σM`, and the body's first impact would otherwise factorise it
    /// (seconds for a 40k-tet piece) on the thread that checks the
    /// impact. The factor of a basis just solved is the eigensolver's.
    pub fn run(
        self,
        cache: Option<&ModalCache>,
        threads: &rayon::ThreadPool,
        on_solve: &(dyn Fn(usize) + Sync),
    ) -> BasisResult {
        let start = Instant::now();
        let basis = analyse(
            &self.mesh,
            &self.material,
            &self.settings,
            cache,
            threads,
            on_solve,
        )
        .map(|(basis, _)| {
            threads.install(|| basis.static_correction(&self.mesh, &self.material));
            basis
        });
        BasisResult {
            key: self.key,
            mesh: self.mesh,
            material: self.material,
            parent_tets: self.parent_tets,
            basis,
            seconds: start.elapsed().as_secs_f64(),
        }
    }
}

/// A finished analysis: the job's mesh, material and tet map with the
/// basis (or the analysis' error).
#[derive(Debug)]
pub struct BasisResult {
    /// The job's key.
    pub key: u64,
    /// The analysed mesh.
    pub mesh: TetMesh,
    /// Its material.
    pub material: Material,
    /// The job's [`BasisJob::parent_tets`].
    pub parent_tets: Vec<u32>,
    /// The modal basis, or why the analysis failed.
    pub basis: Result<ModalBasis, ModalError>,
    /// Wall time of the analysis (s).
    pub seconds: f64,
}

/// One background thread running [`BasisJob`]s in submission order.
///
/// Dropping the worker discards the jobs still queued and waits briefly
/// for the one in hand, which is otherwise left to finish alone.
#[derive(Debug)]
pub struct BasisWorker {
    worker: Worker<BasisJob, BasisResult>,
}

impl BasisWorker {
    /// Starts the thread; `cache` is used for every job if given, and each
    /// analysis runs on `threads`.
    pub fn spawn(cache: Option<ModalCache>, threads: rayon::ThreadPool) -> std::io::Result<Self> {
        let worker = Worker::spawn("tessera-modal", move |job: BasisJob| {
            job.run(cache.as_ref(), &threads, &|_| {})
        })?;
        Ok(Self { worker })
    }

    /// Queues `job`; returns it back if the thread has stopped.
    pub fn submit(&self, job: BasisJob) -> Result<(), Box<BasisJob>> {
        self.worker.submit(job).map_err(Box::new)
    }

    /// Drops `value` (an analysis no longer wanted, a body its fragment's
    /// own basis replaced) on the worker's thread, after the analysis in
    /// hand: a real-time simulation thread must not spend a sync period
    /// freeing a basis.
    pub fn discard(&self, value: impl Send + 'static) {
        self.worker.discard(value);
    }

    /// The analyses finished so far, without waiting.
    pub fn finished(&self) -> Vec<BasisResult> {
        self.worker.finished().collect()
    }

    /// The next finished analysis, waiting at most `timeout`.
    pub fn wait(&self, timeout: Duration) -> Option<BasisResult> {
        self.worker.wait(timeout)
    }

    /// The next finished analysis, waiting for it however long it takes;
    /// `None` once the thread has ended and every result was taken.
    pub fn next(&self) -> Option<BasisResult> {
        self.worker.next()
    }
}
