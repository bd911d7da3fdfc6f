//! Fracture checks run beside the world's steps (real-time sessions).
//!
//! An impact check costs tens of milliseconds (the static correction's
//! solve dominates, docs/fracture.md), several global steps. Run inside
//! the step, it makes the step that long and the haptic thread's syncs
//! late. With [`World::defer_fractures`] a step hands its checks to a
//! [`FractureWorker`] instead and goes on: each struck body moves as an
//! unbreakable rigid body until its check comes back, and the end of the
//! first step after that replaces it by its fragments at its pose then,
//! with its velocity then (`replace_by_fragments`). Its impact's contacts
//! exchange in their step the impulses computed on it as rigid
//! (`BreakableBody::rigid_impact_impulses`: Hertz's law at each contact,
//! the corners that close during the impact included, where the solver
//! gives one step's impulse to the first corner); once the check is back,
//! the difference to the elastic contact's impulses is applied, so the
//! bodies end with the momentum they would have inline, the vibration's
//! share of the energy included (`World::correct_rigid_impulses`). While a
//! body's check is out, the body takes no other: a held-load check is
//! skipped (held loads are checked again), and an impact waits, with the
//! body as the check left it, and then corrects its own rigid impulses.
//! Of several, [`MAX_WAITING_IMPACTS`] wait: the one the person holding
//! the device waits to feel, else the strongest. The others, and those of
//! a body that a check split, are never checked: their rigid impulses
//! stand
//! ([`Counters::unchecked_impacts`](super::Counters::unchecked_impacts)).
//! Checks of the bodies in the haptic sub-world, which the person
//! holding the device waits to feel, go before those of other bodies
//! queued ahead of them, on a thread of their own if the worker has one
//! ([`FractureWorker::with_felt_lane`]), and so does a check that such a
//! body's impact waits for (taken from the first thread's queue by the
//! felt lane, which need not wait for the check in hand).
//!
//! The checks compute what they would inline, from the same contacts and
//! the same fracture state; what differs is when their result enters the
//! world, which depends on wall time. Lockstep sessions and replays,
//! `run` and `drop` therefore check inline, where the same inputs give the
//! same world.

use super::breaking::{run_check, CheckPlan, CheckResult, RigidExchange};
use super::contacts::{BodyContact, Kinematics};
use super::{BodyId, World};
use crate::fracture::{BreakableBody, FractureSettings};
use crate::worker::{Lane, Worker, YieldGate};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Most impacts a body whose check is out keeps waiting; past this the one
/// to go out last (`going_first`) is not checked. A tile bouncing on the
/// floor strikes it a few times while the check of its landing runs
/// (0.2–0.6 s for a 40k-tet tile), and one thread runs every body's checks
/// in turn: keeping four per body delayed the breaks of tiles no one held
/// by seconds among eight 40k-tet tiles (benches/README.md), so a body
/// waits for one check at most.
pub const MAX_WAITING_IMPACTS: usize = 1;

/// One body's check handed to the worker: its plan and a copy of its
/// fracture body, and what the world needs to finish it on return.
pub(super) struct DeferredCheck {
    pub plan: CheckPlan,
    /// The copy of the body's fracture body, taken as the check goes out
    /// (`submit_deferred`): an impact waiting for a check that is out
    /// takes the body as that check leaves it.
    pub body: Option<BreakableBody>,
    /// The body's contacts of the check's step (its `plan.contacts` are
    /// indices into this).
    pub contacts: Vec<BodyContact>,
    /// The body's kinematics before the check's step.
    pub before: Kinematics,
    /// What the check's step exchanged at the impact, on the body as
    /// rigid (`None` for a held-load check, or where the world left the
    /// solver's impulses).
    pub exchange: Option<RigidExchange>,
    /// World time and step of the check.
    pub time_s: f64,
    pub step: u64,
    /// Whether the person holding the device waits for this check, so that
    /// it goes before the checks queued (`FractureWorker`): set as it is
    /// planned for a body in the haptic sub-world, and later if an impact
    /// of a body in the sub-world waits for it (`World::wait_for_check`).
    /// A body's first checks as a fragment are planned before it joins
    /// the sub-world; the hand's strike on it then waits for them.
    pub felt: Arc<AtomicBool>,
    /// Filled by the worker.
    pub result: Option<CheckResult>,
}

impl DeferredCheck {
    /// Whether the person holding the device waits for it
    /// ([`Self::felt`]).
    pub(super) fn is_felt(&self) -> bool {
        self.felt.load(Ordering::Relaxed)
    }
}

/// The checks of one step: run together, in parallel, as inline.
pub(super) struct DeferredBatch {
    pub checks: Vec<DeferredCheck>,
    pub settings: FractureSettings,
    /// The world's `min_tets` for own bases, if enabled: the worker then
    /// prepares the pieces' analyses too (cutting a piece's intact mesh
    /// costs milliseconds).
    pub own_basis_min_tets: Option<usize>,
}

/// One background thread running the checks of deferred steps, each
/// batch's checks in parallel on its own pool: in submission order, but
/// a batch with a check the person holding the device waits for (of a
/// body in the haptic sub-world, `DeferredCheck::felt`) before the
/// batches queued ahead of it. In a scene of many breakable bodies the
/// checks of bodies landing and bouncing elsewhere would otherwise delay
/// the break the person feels by as many checks as are queued. Batches
/// may thus finish out of order: a body has one check out at a time, and
/// each result enters the world as it comes back.
///
/// With a lane for felt checks ([`Self::with_felt_lane`]) those run on a
/// second thread and pool of their own, at once, beside the check in hand
/// on the first: a break the person waits to feel then waits for no other
/// body's check (a tile's landing on its four corners takes 0.2–0.6 s).
///
/// Its threads and pools run at background priority
/// ([`crate::haptics::BACKGROUND_NICE`]): the simulation thread takes the
/// CPU from them whenever it has a step to take. Dropping the worker
/// discards the batches still queued and waits briefly for the one in
/// hand on each thread, which is otherwise left to finish alone.
#[derive(Debug)]
pub struct FractureWorker {
    /// Its first lane runs the checks; the second, if any, the felt ones.
    worker: Worker<DeferredBatch, DeferredBatch>,
    /// Held by the felt lane while it runs a batch; the first lane's pool
    /// pauses at its safe points meanwhile.
    felt_running: Arc<YieldGate>,
}

impl FractureWorker {
    /// Starts the thread; each batch's checks run on `threads`.
    pub fn spawn(threads: rayon::ThreadPool) -> std::io::Result<Self> {
        let felt_running = Arc::new(YieldGate::default());
        felt_running.yield_on(&threads);
        let worker = Worker::spawn_prioritised(
            "tessera-fracture-deferred",
            batch_runner(threads, None),
            |batch: &DeferredBatch| batch.checks.iter().any(DeferredCheck::is_felt),
        )?;
        Ok(Self {
            worker,
            felt_running,
        })
    }

    /// Adds the lane of felt checks: a second thread over the same queue,
    /// running on `threads` each batch submitted felt, in submission order,
    /// and, when it has none, the first batch queued for the first thread
    /// that has become felt since (the person came to wait for it). The
    /// first thread then runs its batches in submission order.
    ///
    /// While it runs a batch, the first thread's checks pause at their
    /// safe points (within and between solves, `worker::yield_to_urgent_work`):
    /// on a machine of few cores they would otherwise share the CPU and
    /// the memory bandwidth with the check the person waits to feel.
    pub fn with_felt_lane(mut self, threads: rayon::ThreadPool) -> std::io::Result<Self> {
        let runner = batch_runner(threads, Some(Arc::clone(&self.felt_running)));
        self.worker
            .add_second_lane("tessera-fracture-felt", runner)?;
        Ok(self)
    }

    /// Queues `batch` for the lane of felt checks if it is felt, else for
    /// the first thread; gives it back if the threads ended.
    fn submit(&self, batch: DeferredBatch) -> Result<(), DeferredBatch> {
        let lane = if batch.checks.iter().any(DeferredCheck::is_felt) {
            Lane::Second
        } else {
            Lane::First
        };
        self.worker.submit_to(lane, batch)
    }

    /// Tells the threads that a queued check may have become felt.
    fn nudge(&self) {
        self.worker.nudge();
    }

    /// The batches finished so far on either thread, without waiting.
    fn finished(&self) -> impl Iterator<Item = DeferredBatch> + '_ {
        self.worker.finished()
    }
}

/// What a worker's thread does with a batch: its checks in parallel on
/// `threads`, each with its pieces' own-basis jobs if the world wants them,
/// holding `urgent` meanwhile if given.
fn batch_runner(
    threads: rayon::ThreadPool,
    urgent: Option<Arc<YieldGate>>,
) -> impl FnMut(DeferredBatch) -> DeferredBatch {
    move |mut batch: DeferredBatch| {
        let _urgent = urgent.as_deref().map(YieldGate::enter);
        let (settings, min_tets) = (batch.settings, batch.own_basis_min_tets);
        threads.install(|| {
            use rayon::prelude::*;
            batch.checks.par_iter_mut().for_each(|check| {
                crate::worker::yield_to_urgent_work();
                let Some(body) = check.body.as_mut() else {
                    return;
                };
                let mut result = run_check(&check.plan, body, &settings, &threads);
                if let Some(min_tets) = min_tets {
                    result.basis_jobs = result
                        .pieces
                        .par_iter()
                        .map(|piece| body.own_basis_job(piece, 0, min_tets))
                        .collect();
                }
                check.result = Some(result);
            });
        });
        batch
    }
}

/// A world's deferred checks: the worker and the bodies it has out.
pub(super) struct Deferred {
    worker: FractureWorker,
    /// Bodies whose check is out, in submission order, with its `felt`.
    out: Vec<(BodyId, Arc<AtomicBool>)>,
    /// Impact checks of bodies whose check was out at the impact, at most
    /// [`MAX_WAITING_IMPACTS`] per body (their `body` is copied when they
    /// go out).
    waiting: Vec<DeferredCheck>,
}

impl World {
    /// From now on, the fracture checks a step calls for run on `worker`
    /// while the world steps on (module docs); their events and fragments
    /// enter the world at the first step after they finish.
    pub fn defer_fractures(&mut self, worker: FractureWorker) {
        self.deferred = Some(Deferred {
            worker,
            out: Vec::new(),
            waiting: Vec::new(),
        });
    }

    /// Bodies whose deferred check has not come back yet.
    pub fn deferred_checks(&self) -> usize {
        self.deferred.as_ref().map_or(0, |d| d.out.len())
    }

    /// Whether this world hands its checks to a worker.
    pub(super) fn defers_fractures(&self) -> bool {
        self.deferred.is_some()
    }

    /// Whether a deferred check of `id` is out (`id` then moves as an
    /// unbreakable rigid body).
    pub fn is_checking(&self, id: BodyId) -> bool {
        self.body(id)
            .and_then(|b| b.breakable.as_ref())
            .is_some_and(|b| b.checking)
    }

    /// Keeps the impact check `check` of a body whose check is out until
    /// that check is back. If the person holding the device waits for it,
    /// they wait for the check out too, which is then felt. Returns how
    /// many impacts will not be checked: with more than
    /// [`MAX_WAITING_IMPACTS`] waiting for the body, the one to go out
    /// last (`going_first`).
    pub(super) fn wait_for_check(&mut self, check: DeferredCheck) -> u64 {
        let Some(deferred) = self.deferred.as_mut() else {
            return 0;
        };
        let id = check.plan.id;
        if check.is_felt() {
            for (_, felt) in deferred.out.iter().filter(|(out, _)| *out == id) {
                felt.store(true, Ordering::Relaxed);
            }
            deferred.worker.nudge();
        }
        deferred.waiting.push(check);
        if waiting_for(&deferred.waiting, id).count() <= MAX_WAITING_IMPACTS {
            return 0;
        }
        let last = waiting_for(&deferred.waiting, id)
            .min_by(|(_, a), (_, b)| going_first(a, b))
            .map(|(at, _)| at);
        last.map_or(0, |at| {
            deferred.waiting.remove(at);
            1
        })
    }

    /// The impact check of `id` to go out next of those kept while its
    /// check was out, if any (`going_first`).
    pub(super) fn take_waiting_check(&mut self, id: BodyId) -> Option<DeferredCheck> {
        let deferred = self.deferred.as_mut()?;
        let (at, _) =
            waiting_for(&deferred.waiting, id).max_by(|(_, a), (_, b)| going_first(a, b))?;
        Some(deferred.waiting.remove(at))
    }

    /// Drops the impact checks kept for `id`, a body split or gone: their
    /// rigid impulses stand. Returns how many.
    pub(super) fn drop_waiting_checks(&mut self, id: BodyId) -> u64 {
        let Some(deferred) = self.deferred.as_mut() else {
            return 0;
        };
        let before = deferred.waiting.len();
        deferred.waiting.retain(|w| w.plan.id != id);
        (before - deferred.waiting.len()) as u64
    }

    /// Hands a step's planned checks to the worker; each body keeps its
    /// fracture body (a copy goes out) and is marked as checked meanwhile.
    /// The checks of bodies in the haptic sub-world go as a batch of their
    /// own, which the worker runs first, the others as another.
    /// A check the worker cannot take (its thread ended) is dropped.
    pub(super) fn submit_deferred(&mut self, checks: Vec<DeferredCheck>) {
        let (felt, others): (Vec<DeferredCheck>, Vec<DeferredCheck>) =
            checks.into_iter().partition(DeferredCheck::is_felt);
        for batch in [felt, others] {
            if !batch.is_empty() {
                self.submit_batch(batch);
            }
        }
    }

    /// [`Self::submit_deferred`] of one batch.
    fn submit_batch(&mut self, mut checks: Vec<DeferredCheck>) {
        for check in &mut checks {
            check.body = self
                .body(check.plan.id)
                .and_then(|b| b.breakable.as_ref())
                .map(|b| b.body.clone());
        }
        let out: Vec<(BodyId, Arc<AtomicBool>)> = checks
            .iter()
            .map(|c| (c.plan.id, Arc::clone(&c.felt)))
            .collect();
        let batch = DeferredBatch {
            checks,
            settings: self.fracture_settings,
            own_basis_min_tets: self.own_basis_min_tets(),
        };
        let Some(deferred) = self.deferred.as_mut() else {
            return;
        };
        if deferred.worker.submit(batch).is_err() {
            tracing::warn!("the fracture thread ended; struck bodies are not checked");
            return;
        }
        deferred.out.extend(out.iter().cloned());
        for (id, _) in out {
            if let Some(breakable) = self.breakable_mut(id) {
                breakable.checking = true;
            }
        }
    }

    /// The deferred checks finished so far, without waiting; their bodies
    /// are checkable again.
    pub(super) fn take_finished_deferred(&mut self) -> Vec<DeferredCheck> {
        let Some(deferred) = self.deferred.as_mut() else {
            return Vec::new();
        };
        let checks: Vec<DeferredCheck> = deferred
            .worker
            .finished()
            .flat_map(|batch| batch.checks)
            .collect();
        deferred
            .out
            .retain(|(id, _)| !checks.iter().any(|c| c.plan.id == *id));
        for check in &checks {
            if let Some(breakable) = self.breakable_mut(check.plan.id) {
                breakable.checking = false;
            }
        }
        checks
    }

    fn breakable_mut(&mut self, id: BodyId) -> Option<&mut super::Breakable> {
        self.bodies
            .get_mut(id.0 as usize)
            .and_then(Option::as_mut)
            .and_then(|b| b.breakable.as_mut())
    }
}

/// The impact checks of `waiting` kept for `id`, with their indices.
fn waiting_for(
    waiting: &[DeferredCheck],
    id: BodyId,
) -> impl Iterator<Item = (usize, &DeferredCheck)> {
    waiting
        .iter()
        .enumerate()
        .filter(move |(_, w)| w.plan.id == id)
}

/// Which of two impact checks waiting for one body goes out first
/// (`Greater`: `a`): the one the person holding the device waits to feel,
/// then the stronger (by the normal impulse of the contacts it uses), then
/// the earlier.
fn going_first(a: &DeferredCheck, b: &DeferredCheck) -> std::cmp::Ordering {
    a.is_felt()
        .cmp(&b.is_felt())
        .then(a.plan.used_impulse_n_s.total_cmp(&b.plan.used_impulse_n_s))
        .then(b.step.cmp(&a.step))
}
