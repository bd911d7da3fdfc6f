//! Large fragments swap to a modal basis of their own.
//!
//! A fragment first vibrates in its parent's modes (Glondu 2012 §3.3.7),
//! which carry its siblings' mass and stiffness. With own bases enabled,
//! the world queues an analysis of every fragment's intact part that has
//! at least `min_tets` tets on a [`BasisWorker`] as the fragment is
//! inserted, and [`World::adopt_own_bases`] swaps the fragment's fracture
//! body to it ([`crate::fracture::BreakableBody::with_own_basis`]). The
//! rigid body, its collider and mass properties do not change.

use super::{BodyId, World};
use crate::fracture::{BasisJob, BasisResult, BasisWorker};

/// The fragment size (intact tets) from which `tessera serve` and `demo`
/// give a fragment its own basis: a piece that large is struck again and
/// rings at its own low modes, and its analysis (seconds on a background
/// core) is repaid; smaller pieces keep their parent's.
pub const OWN_BASIS_MIN_TETS: usize = 500;

/// The analyses a world has queued for its fragments.
#[derive(Debug)]
pub(super) struct OwnBases {
    worker: BasisWorker,
    min_tets: usize,
    /// Queued and not yet adopted, in submission order.
    pending: Vec<Pending>,
    /// Finished analyses of fragments whose deferred fracture check was
    /// out when they came: adopted once it is back.
    held: Vec<BasisResult>,
    adopted: u64,
}

/// A queued analysis: its fragment, and the fragment's damage when it was
/// queued (a fragment that cracked since has a stale mesh in the job).
#[derive(Debug)]
struct Pending {
    body: BodyId,
    damaged_tets: usize,
    cut_edges: usize,
}

/// When [`World::adopt_own_bases`] takes the analyses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adoption {
    /// Those finished so far, without waiting (real time).
    Finished,
    /// Every queued one, waiting for each: the swaps then happen at a
    /// defined point whatever the analyses' wall time (lockstep, replays).
    AllQueued,
}

impl World {
    /// From now on, fragments whose intact part has at least `min_tets`
    /// tets get a modal basis of their own, analysed on `worker`.
    pub fn enable_own_bases(&mut self, worker: BasisWorker, min_tets: usize) {
        self.own_bases = Some(OwnBases {
            worker,
            min_tets,
            pending: Vec::new(),
            held: Vec::new(),
            adopted: 0,
        });
    }

    /// Analyses queued and not yet adopted.
    pub fn pending_own_bases(&self) -> usize {
        self.own_bases.as_ref().map_or(0, |o| o.pending.len())
    }

    /// Fragments swapped to their own basis so far.
    pub fn adopted_own_bases(&self) -> u64 {
        self.own_bases.as_ref().map_or(0, |o| o.adopted)
    }

    /// Swaps fragments to the analyses `adoption` takes; returns how many
    /// swapped. A fragment that broke or cracked since its analysis was
    /// queued keeps its basis.
    pub fn adopt_own_bases(&mut self, adoption: Adoption) -> usize {
        let Some(own) = self.own_bases.as_mut() else {
            return 0;
        };
        let mut results: Vec<BasisResult> = std::mem::take(&mut own.held);
        // Analyses still to come from the worker.
        let waiting = own.pending.len().saturating_sub(results.len());
        results.extend(match adoption {
            Adoption::Finished => own.worker.finished(),
            Adoption::AllQueued => {
                let mut results = Vec::with_capacity(waiting);
                while results.len() < waiting {
                    match own.worker.next() {
                        Some(result) => results.push(result),
                        // The worker's thread ended: nothing more comes.
                        None => break,
                    }
                }
                if results.len() < waiting {
                    tracing::warn!(
                        "the modal analysis thread ended; fragments keep their parent's basis"
                    );
                    own.pending.clear();
                }
                results
            }
        });
        let mut swapped = 0;
        for result in results {
            let key = BodyId(result.key as u32);
            let Some(at) = own.pending.iter().position(|p| p.body == key) else {
                own.worker.discard(result);
                continue;
            };
            let Some(breakable) = self
                .bodies
                .get_mut(key.0 as usize)
                .and_then(Option::as_mut)
                .and_then(|b| b.breakable.as_mut())
            else {
                // The fragment broke again or left the world meanwhile.
                own.pending.remove(at);
                own.worker.discard(result);
                continue;
            };
            if breakable.checking {
                // The check's return replaces the fracture body.
                own.held.push(result);
                continue;
            }
            let pending = own.pending.remove(at);
            let state = breakable.body.state();
            if state.damaged_count() != pending.damaged_tets
                || state.cut_edge_count() != pending.cut_edges
            {
                tracing::debug!(
                    body = key.0,
                    "fragment cracked before its own basis was ready"
                );
                own.worker.discard(result);
                continue;
            }
            let seconds = result.seconds;
            match breakable.body.with_own_basis(result) {
                Ok(body) => {
                    tracing::info!(
                        body = key.0,
                        tets = body.mesh().tet_count(),
                        analysis_s = seconds,
                        "fragment has its own modal basis"
                    );
                    // The last holder of the parent's basis, maybe.
                    own.worker
                        .discard(std::mem::replace(&mut breakable.body, body));
                    own.adopted += 1;
                    swapped += 1;
                }
                Err(error) => {
                    tracing::warn!(body = key.0, %error, "a fragment's own modal analysis failed");
                }
            }
        }
        swapped
    }

    /// The smallest intact part given an own basis, if own bases are
    /// enabled.
    pub(super) fn own_basis_min_tets(&self) -> Option<usize> {
        self.own_bases.as_ref().map(|o| o.min_tets)
    }

    /// The analysis of `piece` of `parent` if own bases are enabled and it
    /// is large enough (its key is set as it is queued).
    pub(super) fn own_basis_job(
        &self,
        parent: &crate::fracture::BreakableBody,
        piece: &crate::fracture::Fragment,
    ) -> Option<BasisJob> {
        parent.own_basis_job(piece, 0, self.own_basis_min_tets()?)
    }

    /// Queues `job`, the analysis of fragment `child` (just inserted, cut
    /// from `parent`), if own bases are enabled.
    pub(super) fn queue_own_basis(
        &mut self,
        parent: &crate::fracture::BreakableBody,
        mut job: BasisJob,
        child: BodyId,
    ) {
        let Some(own) = self.own_bases.as_mut() else {
            return;
        };
        job.key = u64::from(child.0);
        let state = parent.state();
        let pending = Pending {
            body: child,
            damaged_tets: state.damaged_count(),
            cut_edges: state.cut_edge_count(),
        };
        if own.worker.submit(job).is_ok() {
            own.pending.push(pending);
        } else {
            tracing::warn!("the modal analysis thread ended; fragments keep their parent's basis");
        }
    }
}
