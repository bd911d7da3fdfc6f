//! Contacts on breakable bodies to the fracture engine, and broken bodies
//! replaced by their fragments in the same step (Glondu 2012 §3.3, §4.2),
//! or at a later one when the checks are deferred (`deferred.rs`).

use super::contacts::{BodyContact, Kinematics};
use super::deferred::DeferredCheck;
use super::shapes::{contact_radius_m, fragment_shape, Surface};
use super::speculative;
use super::units::{glam, vector};
use super::{BodyId, Breakable, Counters, EventTimes, StepInputs, World, WorldBody};
use crate::fracture::{
    BasisJob, BreakableBody, ContactEnd, ContactHistory, ContactPoint, Fragment, ImpactOutcome,
    Impactor, Pattern, StaticLoad,
};
use nalgebra::{Point3, Vector3};
use rapier3d::dynamics::MassProperties;
use rapier3d::geometry::ColliderBuilder;
use rayon::prelude::*;
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// A held load is checked again once it exceeds the last checked one by
/// this factor.
const STATIC_GROWTH: f64 = 1.1;

/// Contact steps times contacts that the exchange of a deferred impact on
/// its body taken as rigid may take on the simulation thread
/// ([`World::apply_rigid_impulses`]) unless the world is given another
/// budget ([`World::limit_rigid_exchanges`]): a few milliseconds on this
/// project's reference machine (benches/README.md). Past it the solver's
/// impulses stand in the step, and the check's elastic ones replace them
/// when it is back, as they replace the rigid ones. A fragment lying on
/// the floor with debris resting on it, struck by more debris, took up to
/// 5 500 steps of 23 contacts (10 ms): the lightest contact sets the step
/// through the whole of the piece's slow bounce on the floor.
pub(super) const RIGID_EXCHANGE_CONTACT_STEPS: usize = 20_000;

/// Farthest apart the two sides' points of one solver contact lie (m):
/// they differ by the penetration, well below this.
const MIRROR_DISTANCE_M: f64 = 1e-3;

/// Why a fracture check ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FractureKind {
    /// Contacts approaching faster than `impact_speed_m_s` (§3.3).
    Impact,
    /// Resting contacts, quasi-static check (§3.3.7).
    Static,
}

/// A fracture check that cracked a body.
#[derive(Debug, Clone, Serialize)]
pub struct FractureEvent {
    /// World time of the check (s).
    pub time_s: f64,
    /// World step of the check.
    pub step: u64,
    /// The body that cracked.
    pub body: BodyId,
    /// Its name.
    pub name: String,
    /// Impact or static.
    pub kind: FractureKind,
    /// Contacts of the event and the sum of their normal impulses (N·s).
    pub contacts: usize,
    /// Sum of the used contacts' normal impulses (N·s).
    pub impulse_n_s: f64,
    /// Largest principal stress found (Pa).
    pub peak_stress_pa: f64,
    /// Cracks started.
    pub cracks: usize,
    /// Crack area (m²).
    pub crack_area_m2: f64,
    /// The bodies that replaced it (empty if the cracks did not split it).
    pub fragments: Vec<BodyId>,
    /// Pieces removed as debris (below `debris_volume_m3`), their mass and
    /// the momentum they took out of the world.
    pub debris: usize,
    /// Mass of the debris (kg).
    pub debris_mass_kg: f64,
    /// Momentum the debris took out of the world (N·s).
    pub debris_momentum_n_s: [f64; 3],
    /// The parent's mass (kg).
    pub parent_mass_kg: f64,
    /// The fragments' total mass (kg).
    pub fragments_mass_kg: f64,
    /// The parent's momentum before the step, the normal contact impulses
    /// it received in the step, its momentum after rapier's step, and the
    /// fragments' total momentum (N·s).
    pub momentum_before_n_s: [f64; 3],
    /// Normal contact impulses it received in the step (N·s).
    pub contact_impulse_n_s: [f64; 3],
    /// Its momentum after rapier's step (N·s).
    pub momentum_after_n_s: [f64; 3],
    /// The fragments' total momentum (N·s).
    pub fragments_momentum_n_s: [f64; 3],
    /// The fracture pattern of the split (Glondu §5.1), if the world
    /// records them ([`World::record_split_patterns`]) and the body that
    /// split was whole (not itself a fragment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<Pattern>,
}

/// An impact check of the last step, cracked or not: the contact the
/// fracture engine computed for it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ImpactCheck {
    /// The struck body.
    pub body: BodyId,
    /// Largest normal approach speed of its contacts (m/s).
    pub approach_speed_m_s: f64,
    /// The computed contact (elastic: Hertz's law and the body's modes).
    pub contact: ContactHistory,
    /// Normal impulse the striking contacts exchanged (N·s): the computed
    /// contact's, its unloading scaled by the pairs' restitution, or the
    /// solver's where it was left to the solver. A deferred check's
    /// contacts exchange the contact computed on the body as rigid in
    /// their step and the computed contact's once the check is back
    /// (`World::correct_rigid_impulses`), which this is.
    pub exchanged_impulse_n_s: f64,
    /// Largest principal stress found (Pa; a lower bound below R_c).
    pub peak_stress_pa: f64,
}

/// One body's fracture check, planned from the step's contacts.
pub(super) struct CheckPlan {
    pub(super) id: BodyId,
    kind: FractureKind,
    /// The body's contacts: a range of the step's sorted contacts.
    contacts: std::ops::Range<usize>,
    /// The contacts the check uses (impacts, or all held loads) and the
    /// sum of their normal impulses (N·s).
    used_contacts: usize,
    pub(super) used_impulse_n_s: f64,
    points: Vec<ContactPoint>,
    loads: Vec<StaticLoad>,
    held_force_n: f64,
}

/// What a deferred impact's step exchanged at its striking contacts, on
/// the body as rigid (`World::apply_rigid_impulses`), for the correction
/// when its check is back (`World::correct_rigid_impulses`).
pub(super) struct RigidExchange {
    /// Per plan point where the world set the impulse: the solver's and
    /// the one exchanged instead (N·s).
    points: Vec<Option<(f64, f64)>>,
    /// The struck body's friction per newton-second of normal impulse in
    /// that step (`World::solver_friction_per_normal`).
    friction_per_normal: Vector3<f64>,
    /// The struck body's centre of mass after that step (m).
    struck_com_m: Point3<f64>,
    /// Per plan point, the other body's centre of mass then (m).
    other_com_m: Vec<Option<Point3<f64>>>,
}

impl RigidExchange {
    /// The solver's impulse at each plan point (0 where the world left it).
    fn solver_impulses_n_s(&self) -> Vec<f64> {
        self.points
            .iter()
            .map(|p| p.map_or(0.0, |(solver_n_s, _)| solver_n_s))
            .collect()
    }
}

/// The impulse (N·s) on the struck body that takes `contact`, whose
/// solver impulse was `solver_n_s`, from exchanging `from_n_s` to
/// `to_n_s`: along its normal the difference; and a contact whose normal
/// impulse falls below the solver's keeps its friction in the same
/// proportion (friction left at the solver's level would exceed
/// Coulomb's cone and could reverse the slip, adding energy).
fn impulse_change(
    contact: &BodyContact,
    solver_n_s: f64,
    from_n_s: f64,
    to_n_s: f64,
    friction_per_normal: Vector3<f64>,
) -> Vector3<f64> {
    let n = contact.normal;
    let tangential = friction_per_normal - n * n.dot(&friction_per_normal);
    (to_n_s - from_n_s) * n + (to_n_s.min(solver_n_s) - from_n_s.min(solver_n_s)) * tangential
}

/// Sets contact `index` of the step's `contacts`, on `body`, and the
/// pair's contact as the other body saw it (if listed), to `impulse_n_s`.
fn set_exchanged(contacts: &mut [BodyContact], index: usize, body: BodyId, impulse_n_s: f64) {
    let contact = contacts[index];
    contacts[index].impulse_n_s = impulse_n_s;
    if let Some(other) = contact.other {
        if let Some(mirror) = contacts.iter_mut().find(|c| {
            c.body == other
                && c.other == Some(body)
                && (c.point_m - contact.point_m).norm() <= MIRROR_DISTANCE_M
        }) {
            mirror.impulse_n_s = impulse_n_s;
        }
    }
}

/// The sum of the normal impulses `plan`'s striking contacts exchanged.
fn used_impulse_n_s(plan: &CheckPlan, contacts: &[BodyContact]) -> f64 {
    plan.points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.relative_speed_m_s > 0.0)
        .map(|(i, _)| contacts[plan.contacts.start + i].impulse_n_s)
        .fold(0.0, |a, b| a + b)
}

impl CheckPlan {
    /// What [`World::last_impacts`] lists for this impact check.
    fn impact_check(&self, outcome: &ImpactOutcome) -> ImpactCheck {
        ImpactCheck {
            body: self.id,
            approach_speed_m_s: self
                .points
                .iter()
                .map(|p| p.relative_speed_m_s)
                .fold(0.0, f64::max),
            contact: outcome.contact,
            exchanged_impulse_n_s: self.used_impulse_n_s,
            peak_stress_pa: outcome.peak_stress_pa,
        }
    }
}

/// What a check found, computed in parallel with the others.
pub(super) struct CheckResult {
    outcome: ImpactOutcome,
    /// The body's fragments after a check that cracked it, meshed in the
    /// parallel phase with the check; empty otherwise.
    pub(super) pieces: Vec<Fragment>,
    /// The own-basis analysis of each piece, prepared beside the step
    /// (deferred checks: `deferred.rs`); empty when the world prepares
    /// them as it inserts the pieces.
    pub(super) basis_jobs: Vec<Option<BasisJob>>,
    engine: crate::fracture::Counters,
    check_s: f64,
}

impl World {
    /// Runs the fracture checks the last step's contacts (and `inputs`'
    /// external contacts) call for, in parallel on `threads`; returns how
    /// many bodies cracked.
    pub(super) fn fracture_step(
        &mut self,
        inputs: &StepInputs,
        threads: &rayon::ThreadPool,
        counters: &mut Counters,
    ) -> usize {
        let mut contacts = std::mem::take(&mut self.contacts);
        contacts.clear();
        self.impacts.clear();
        self.split_loads.clear();
        let breakable = |id: BodyId| self.body(id).is_some_and(|b| b.breakable.is_some());
        let outside_sub_world =
            |id: BodyId| breakable(id) && inputs.sub_world_members.binary_search(&id).is_err();
        // Without a breakable body (a pile of cubes) no contact is wanted:
        // the scan over every contact pair is skipped.
        if self.bodies.iter().flatten().any(|b| b.breakable.is_some()) {
            self.gather_contacts(&outside_sub_world, &mut contacts);
        }
        contacts.extend(
            inputs
                .external_contacts
                .iter()
                .filter(|c| breakable(c.body)),
        );
        // The sub-world's contacts too: its solver, rapier's, finds a body
        // landing flat on one corner as the global one does.
        self.add_closing_corners(&mut contacts);
        // Per body in id order: deterministic whatever the pair order.
        contacts.sort_by_key(|c| c.body);
        // Plan every body's check, run them in parallel (each touches only
        // its own fracture state, taken out of the world meanwhile), then
        // replace broken bodies in id order.
        let mut planned: Vec<(CheckPlan, Breakable)> = Vec::new();
        // Deferred plans, and whether each waits for a check that is out.
        let mut deferred: Vec<(CheckPlan, bool)> = Vec::new();
        let defers = self.defers_fractures();
        let mut start = 0;
        for group in contacts.chunk_by(|a, b| a.body == b.body) {
            let offset = start;
            start += group.len();
            let Some(plan) = self.plan_check(group, offset) else {
                continue;
            };
            if self.is_checking(plan.id) {
                // Its deferred check is out (deferred.rs).
                if plan.kind == FractureKind::Impact {
                    deferred.push((plan, true));
                }
                continue;
            }
            if defers {
                deferred.push((plan, false));
                continue;
            }
            let taken = self.bodies[plan.id.0 as usize]
                .as_mut()
                .and_then(|b| b.breakable.take());
            planned.extend(taken.map(|body| (plan, body)));
        }
        if !deferred.is_empty() {
            let exchanges = self.apply_rigid_impulses(
                &mut contacts,
                &mut deferred,
                inputs.sub_world_members,
                threads,
                counters,
            );
            let mut out = Vec::new();
            for ((plan, waits), exchange) in deferred.into_iter().zip(exchanges) {
                let check =
                    self.deferred_check(plan, &contacts, exchange, inputs.sub_world_members);
                if waits {
                    counters.unchecked_impacts += self.wait_for_check(check);
                } else {
                    out.push(check);
                }
            }
            if !out.is_empty() {
                self.submit_deferred(out);
            }
        }
        if planned.is_empty() {
            // Most steps: no hand-off to the workers.
            self.contacts = contacts;
            return 0;
        }
        let settings = self.fracture_settings;
        let results: Vec<CheckResult> = threads.install(|| {
            planned
                .par_iter_mut()
                .map(|(plan, breakable)| run_check(plan, &mut breakable.body, &settings, threads))
                .collect()
        });
        let mut cracked = 0;
        let mut struck: Vec<BodyId> = planned
            .iter()
            .filter(|(plan, _)| plan.kind == FractureKind::Impact)
            .map(|(plan, _)| plan.id)
            .collect();
        struck.sort_unstable();
        // Before any impulse is applied: it changes the other body too.
        let frictions: Vec<Vector3<f64>> = planned
            .iter()
            .map(|(plan, _)| self.solver_friction_per_normal(&contacts[plan.contacts.clone()]))
            .collect();
        for (((mut plan, mut breakable), result), friction_per_normal) in
            planned.into_iter().zip(results).zip(frictions)
        {
            if plan.kind == FractureKind::Static {
                breakable.last_static_check_s = self.time_s;
                breakable.last_static_force_n = plan.held_force_n;
            }
            if let Some(body) = self.bodies[plan.id.0 as usize].as_mut() {
                body.breakable = Some(breakable);
            }
            counters.engine.add(&result.engine);
            let range = plan.contacts.clone();
            if plan.kind == FractureKind::Impact {
                if result.outcome.contact.end == ContactEnd::Separated {
                    let _ = self.apply_contact_impulses(
                        &mut contacts,
                        &mut plan,
                        &result.outcome.contact_impulses_n_s,
                        friction_per_normal,
                        inputs.sub_world_members,
                        &struck,
                    );
                }
                self.impacts.push(plan.impact_check(&result.outcome));
            }
            let before = self.before[plan.id.0 as usize];
            let when = (self.time_s, self.steps);
            if let Some(times) = self.finish_check(&contacts[range], before, when, plan, result) {
                counters.events.push(times);
                cracked += 1;
            }
        }
        self.contacts = contacts;
        cracked
    }

    /// The deferred form of `plan`, planned at this step from the step's
    /// `contacts`: with its own contacts; its fracture body is copied as
    /// it goes out (`submit_deferred`). It is felt if its body is one of
    /// the haptic sub-world's `sub_world_members` (ascending).
    fn deferred_check(
        &self,
        mut plan: CheckPlan,
        contacts: &[BodyContact],
        exchange: Option<RigidExchange>,
        sub_world_members: &[BodyId],
    ) -> DeferredCheck {
        let id = plan.id;
        let felt = Arc::new(AtomicBool::new(
            sub_world_members.binary_search(&id).is_ok(),
        ));
        let own = contacts[plan.contacts.clone()].to_vec();
        plan.contacts = 0..own.len();
        DeferredCheck {
            plan,
            body: None,
            contacts: own,
            before: self.before[id.0 as usize],
            exchange,
            time_s: self.time_s,
            step: self.steps,
            felt,
            result: None,
        }
    }

    /// The impacts of deferred checks (`plans`, each with whether it waits
    /// for a check that is out) exchange in their step the impulses
    /// computed on their bodies as rigid
    /// (`BreakableBody::rigid_impact_impulses`): the world cannot wait for
    /// the elastic contact of the check, and the solver's one-step impulse
    /// gives a tile landing flat on one corner a spin that the computed
    /// contact, on all its closing corners, does not.
    ///
    /// Where that contact is still going on at its horizon or past the
    /// world's budget ([`World::limit_rigid_exchanges`]), the solver's
    /// impulses stand.
    ///
    /// Returns, per plan, what was exchanged, for the correction to the
    /// elastic contact when the check is back
    /// ([`Self::correct_rigid_impulses`]).
    fn apply_rigid_impulses(
        &mut self,
        contacts: &mut [BodyContact],
        plans: &mut [(CheckPlan, bool)],
        sub_world_members: &[BodyId],
        threads: &rayon::ThreadPool,
        counters: &mut Counters,
    ) -> Vec<Option<RigidExchange>> {
        let mut struck: Vec<BodyId> = plans
            .iter()
            .filter(|(plan, _)| plan.kind == FractureKind::Impact)
            .map(|(plan, _)| plan.id)
            .collect();
        struck.sort_unstable();
        // Each impact's contact integration is its own (milliseconds where
        // debris strikes a piece on the floor): in parallel.
        let impacts: Vec<Option<(&BreakableBody, &[ContactPoint])>> = plans
            .iter()
            .map(|(plan, _)| {
                let body = &self.body(plan.id)?.breakable.as_ref()?.body;
                (plan.kind == FractureKind::Impact).then_some((body, &plan.points[..]))
            })
            .collect();
        let budget = self.rigid_exchange_contact_steps;
        let impulses: Vec<Option<Vec<f64>>> = threads.install(|| {
            impacts
                .par_iter()
                .map(|impact| {
                    impact.and_then(|(body, points)| {
                        let max_steps = budget / points.len().max(1);
                        body.rigid_impact_impulses(points, max_steps)
                    })
                })
                .collect()
        });
        // Before any impulse is applied: it changes the other body too.
        let frictions: Vec<Vector3<f64>> = plans
            .iter()
            .map(|(plan, _)| self.solver_friction_per_normal(&contacts[plan.contacts.clone()]))
            .collect();
        plans
            .iter_mut()
            .zip(impulses)
            .zip(frictions)
            .map(|(((plan, _), impulses), friction_per_normal)| {
                if plan.kind != FractureKind::Impact {
                    return None;
                }
                // The solver's impulses stand where the rigid contact gave
                // none: exchanged as they are, then corrected.
                let (impulses, counted) = match impulses {
                    Some(impulses) => (impulses, &mut counters.rigid_exchanges),
                    None => (
                        contacts[plan.contacts.clone()]
                            .iter()
                            .map(|c| c.impulse_n_s)
                            .collect(),
                        &mut counters.solver_exchanges,
                    ),
                };
                let exchange = self.apply_contact_impulses(
                    contacts,
                    plan,
                    &impulses,
                    friction_per_normal,
                    sub_world_members,
                    &struck,
                );
                *counted += u64::from(exchange.is_some());
                exchange
            })
            .collect()
    }

    /// Finishes the deferred checks that have come back, after the step's
    /// own checks are planned: each body takes its checked fracture body,
    /// and a body that cracked records its event and is replaced by its
    /// fragments, at its pose and with its velocity now. The contact
    /// impulses of the check's step stood (`apply_rigid_impulses`). The
    /// next impact waiting for the check then goes out; a body gone or
    /// split drops those waiting (deferred.rs). Returns how many bodies
    /// cracked.
    pub(super) fn finish_deferred_checks(
        &mut self,
        sub_world_members: &[BodyId],
        counters: &mut Counters,
    ) -> usize {
        let mut cracked = 0;
        for check in self.take_finished_deferred() {
            let id = check.plan.id;
            let DeferredCheck {
                mut plan,
                body,
                mut contacts,
                before,
                exchange,
                time_s,
                step,
                result,
                ..
            } = check;
            let (Some(result), Some(breakable)) = (
                result,
                self.bodies
                    .get_mut(plan.id.0 as usize)
                    .and_then(Option::as_mut)
                    .and_then(|b| b.breakable.as_mut()),
            ) else {
                self.send_next_waiting_check(id, counters);
                continue;
            };
            if let Some(body) = body {
                breakable.body = body;
            }
            if plan.kind == FractureKind::Static {
                breakable.last_static_check_s = time_s;
                breakable.last_static_force_n = plan.held_force_n;
            }
            counters.engine.add(&result.engine);
            if plan.kind == FractureKind::Impact {
                if let Some(exchange) = &exchange {
                    // As inline: the elastic contact's impulses where it
                    // separated, the solver's otherwise.
                    let solver_n_s;
                    let computed_n_s = if result.outcome.contact.end == ContactEnd::Separated {
                        &result.outcome.contact_impulses_n_s[..]
                    } else {
                        solver_n_s = exchange.solver_impulses_n_s();
                        &solver_n_s[..]
                    };
                    self.correct_rigid_impulses(
                        &mut contacts,
                        &mut plan,
                        exchange,
                        computed_n_s,
                        sub_world_members,
                    );
                }
                self.impacts.push(plan.impact_check(&result.outcome));
            }
            if let Some(times) = self.finish_check(&contacts, before, (time_s, step), plan, result)
            {
                counters.events.push(times);
                cracked += 1;
            }
            self.send_next_waiting_check(id, counters);
        }
        cracked
    }

    /// Once `id`'s check is back: the next impact that came while it was
    /// out goes out, with the body as the check left it; if the check
    /// split the body or it is gone, those waiting are dropped.
    fn send_next_waiting_check(&mut self, id: BodyId, counters: &mut Counters) {
        if self.body(id).is_some_and(|b| b.breakable.is_some()) {
            if let Some(next) = self.take_waiting_check(id) {
                self.submit_deferred(vec![next]);
            }
        } else {
            counters.unchecked_impacts += self.drop_waiting_checks(id);
        }
    }

    /// What one breakable body's contacts of the step call for: an impact
    /// event if any approached fast enough, otherwise (at most every
    /// `static_check_interval_s`, and only for a grown load) the
    /// quasi-static check of the held loads; `None` for no check.
    /// `contacts` start at index `offset` of the step's contacts.
    fn plan_check(&self, contacts: &[BodyContact], offset: usize) -> Option<CheckPlan> {
        let id = contacts[0].body;
        let impacts: Vec<&BodyContact> = contacts
            .iter()
            .filter(|c| c.approach_speed_m_s > self.settings.impact_speed_m_s)
            .collect();
        let dt = self.settings.time_step_s;
        let held_force_n = contacts
            .iter()
            .map(|c| c.impulse_n_s)
            .fold(0.0, |a, b| a + b)
            / dt;
        let kind = if impacts.is_empty() {
            // The static response is linear in the load: a held load is
            // checked again only once it has grown by STATIC_GROWTH.
            let breakable = self.body(id)?.breakable.as_ref()?;
            if self.time_s - breakable.last_static_check_s < self.settings.static_check_interval_s
                || held_force_n <= STATIC_GROWTH * breakable.last_static_force_n
            {
                return None;
            }
            FractureKind::Static
        } else {
            FractureKind::Impact
        };
        let inverse = self.pose(id)?.inverse();
        let used: Vec<&BodyContact> = match kind {
            FractureKind::Impact => impacts.clone(),
            FractureKind::Static => contacts.iter().collect(),
        };
        let mut check = CheckPlan {
            id,
            kind,
            contacts: offset..offset + contacts.len(),
            used_contacts: used.len(),
            used_impulse_n_s: used.iter().map(|c| c.impulse_n_s).fold(0.0, |a, b| a + b),
            points: Vec::new(),
            loads: Vec::new(),
            held_force_n,
        };
        match kind {
            FractureKind::Impact => {
                // Every contact of the body takes part, supports included
                // (a static body is an impactor of infinite mass, at rest
                // or approaching); each contact's impactor is its other
                // body, and one touching at several points shares its mass
                // among them as the step's impulses do (equally where the
                // step left some of them unloaded: corners that close
                // during the impact). The struck body's own mass enters through
                // its rigid motion.
                let faces = face_contacts(contacts);
                check.points = contacts
                    .iter()
                    .zip(faces)
                    .map(|(c, face)| {
                        let same: Vec<&BodyContact> =
                            contacts.iter().filter(|d| d.other == c.other).collect();
                        let total: f64 = same.iter().map(|d| d.impulse_n_s).sum();
                        let unloaded = same.iter().any(|d| d.impulse_n_s <= 0.0);
                        let share = if total > 0.0 && !unloaded {
                            c.impulse_n_s / total
                        } else {
                            1.0 / same.len() as f64
                        };
                        let mut impactor = self.impactor(id, c.other);
                        impactor.mass_kg *= share;
                        // A contact slower than an impact is a support at
                        // rest (it is a held load to the static check).
                        let striking = c.approach_speed_m_s > self.settings.impact_speed_m_s;
                        ContactPoint {
                            point_m: inverse * c.point_m,
                            normal: inverse * c.normal,
                            impulse_n_s: c.impulse_n_s,
                            relative_speed_m_s: if striking { c.approach_speed_m_s } else { 0.0 },
                            impactor,
                            face,
                            gap_m: c.gap_m,
                        }
                    })
                    .collect();
            }
            FractureKind::Static => {
                check.loads = contacts
                    .iter()
                    .zip(face_contacts(contacts))
                    .map(|(c, face)| StaticLoad {
                        point_m: inverse * c.point_m,
                        force_n: inverse * c.normal * (c.impulse_n_s / dt),
                        face,
                    })
                    .collect();
            }
        }
        Some(check)
    }

    /// Makes the impact's striking contacts exchange the normal impulses
    /// `computed_n_s` the fracture engine computed for them, one per
    /// `plan.points` (issue 26 §3; the pair's restitution scales the
    /// unloading, `ImpactOutcome::contact_impulses_n_s`), for a contact
    /// that separated, in place of the solver's one-step impulse, whose ratio to the
    /// momentum depends on the step and the penetration: each contact
    /// `c` adds `(J_c − J_solver,c) n_c` at its point to the struck body and
    /// the opposite to the other. The step's contacts (`contacts`, both
    /// sides of a pair) then hold the impulses applied.
    ///
    /// Left to the solver: contacts at rest (supports: constraints the
    /// solver keeps holding, gravity included, which the impact's
    /// computation leaves out), an impact still closing at the engine's
    /// horizon (a body settling, `ContactEnd::TimeLimit`), contacts of the
    /// sub-world's members (the sub-world moves them), and a pair of two
    /// struck bodies but from the check of the lower id (so it is applied
    /// once).
    fn apply_contact_impulses(
        &mut self,
        contacts: &mut [BodyContact],
        plan: &mut CheckPlan,
        computed_n_s: &[f64],
        friction_per_normal: Vector3<f64>,
        sub_world_members: &[BodyId],
        struck: &[BodyId],
    ) -> Option<RigidExchange> {
        if computed_n_s.len() != plan.points.len() {
            return None;
        }
        let in_sub_world = |id: BodyId| sub_world_members.binary_search(&id).is_ok();
        if in_sub_world(plan.id) {
            return None;
        }
        let mut exchange = RigidExchange {
            points: vec![None; plan.points.len()],
            friction_per_normal,
            struck_com_m: self.com_m(plan.id).unwrap_or_else(Point3::origin),
            other_com_m: Vec::with_capacity(plan.points.len()),
        };
        for (i, point) in plan.points.iter().enumerate() {
            let index = plan.contacts.start + i;
            let contact = contacts[index];
            exchange
                .other_com_m
                .push(contact.other.and_then(|o| self.com_m(o)));
            let computed_n_s = computed_n_s[i];
            if point.relative_speed_m_s <= 0.0 || !computed_n_s.is_finite() {
                continue;
            }
            if let Some(other) = contact.other {
                if in_sub_world(other) || (other < plan.id && struck.binary_search(&other).is_ok())
                {
                    continue;
                }
            }
            let solver_n_s = contact.impulse_n_s;
            // The solver's own impulse (the fallback of
            // `apply_rigid_impulses`) is recorded but changes nothing.
            if computed_n_s != solver_n_s {
                let change = impulse_change(
                    &contact,
                    solver_n_s,
                    solver_n_s,
                    computed_n_s,
                    friction_per_normal,
                );
                let other = contact.other.map(|o| (o, contact.point_m));
                self.exchange_at(plan.id, &contact.point_m, other, &change);
            }
            exchange.points[i] = Some((solver_n_s, computed_n_s));
            set_exchanged(contacts, index, plan.id, computed_n_s);
        }
        plan.used_impulse_n_s = used_impulse_n_s(plan, contacts);
        Some(exchange)
    }

    /// Makes a deferred impact's striking contacts, which exchanged the
    /// impulses computed on the body as rigid in their step (`exchange`),
    /// exchange the elastic contact's `computed_n_s` now that its check is
    /// back: the difference, applied at each contact's point relative to
    /// the two bodies' centres of mass as they were at the impact (the
    /// same linear and angular impulses, late by the check's time). Where
    /// the body is now moved by the sub-world, it is left as it is. The
    /// check's contacts (`contacts`, the struck body's) then hold the
    /// impulses exchanged.
    fn correct_rigid_impulses(
        &mut self,
        contacts: &mut [BodyContact],
        plan: &mut CheckPlan,
        exchange: &RigidExchange,
        computed_n_s: &[f64],
        sub_world_members: &[BodyId],
    ) {
        if computed_n_s.len() != plan.points.len()
            || sub_world_members.binary_search(&plan.id).is_ok()
        {
            return;
        }
        let Some(struck_now_m) = self.com_m(plan.id) else {
            return;
        };
        for (i, applied) in exchange.points.iter().enumerate() {
            let (Some((solver_n_s, rigid_n_s)), true) = (*applied, computed_n_s[i].is_finite())
            else {
                continue;
            };
            let index = plan.contacts.start + i;
            let contact = contacts[index];
            let change = impulse_change(
                &contact,
                solver_n_s,
                rigid_n_s,
                computed_n_s[i],
                exchange.friction_per_normal,
            );
            let on_struck_m = struck_now_m + (contact.point_m - exchange.struck_com_m);
            let on_other = contact
                .other
                .filter(|o| sub_world_members.binary_search(o).is_err())
                .zip(exchange.other_com_m.get(i).copied().flatten())
                .and_then(|(o, then_m)| Some((o, self.com_m(o)? + (contact.point_m - then_m))));
            self.exchange_at(plan.id, &on_struck_m, on_other, &change);
            contacts[index].impulse_n_s = computed_n_s[i];
        }
        plan.used_impulse_n_s = used_impulse_n_s(plan, contacts);
    }

    /// Applies `change` (N·s) to `body` at `at_m` and its opposite to the
    /// other body of `other` at its point (m).
    fn exchange_at(
        &mut self,
        body: BodyId,
        at_m: &Point3<f64>,
        other: Option<(BodyId, Point3<f64>)>,
        change: &Vector3<f64>,
    ) {
        let units = self.units;
        if let Some(h) = self.body(body).map(|b| b.handle) {
            self.physics.bodies[h].apply_impulse_at_point(
                units.to_sim(change),
                units.point_to_sim(at_m),
                true,
            );
        }
        if let Some((h, other_at_m)) = other.and_then(|(o, at)| Some((self.body(o)?.handle, at))) {
            self.physics.bodies[h].apply_impulse_at_point(
                units.to_sim(&-change),
                units.point_to_sim(&other_at_m),
                true,
            );
        }
    }

    /// The centre of mass of `id` now (m).
    fn com_m(&self, id: BodyId) -> Option<Point3<f64>> {
        let body = self.body(id)?;
        Some(
            self.units
                .point_to_si(self.physics.bodies[body.handle].center_of_mass()),
        )
    }

    /// The friction impulse the solver applied to a body in the last step
    /// per newton-second of its normal impulses: its momentum change less
    /// its normal impulses and gravity, over the sum of those (friction is
    /// taken as shared among its contacts as their normal impulses are,
    /// Coulomb's law while sliding). `contacts` are the body's.
    fn solver_friction_per_normal(&self, contacts: &[BodyContact]) -> Vector3<f64> {
        let normal_total_n_s: f64 = contacts.iter().map(|c| c.impulse_n_s).sum();
        let Some(id) = contacts.first().map(|c| c.body) else {
            return Vector3::zeros();
        };
        match (self.body(id), self.before.get(id.0 as usize)) {
            (Some(body), Some(before)) if normal_total_n_s > 0.0 => {
                let mass_kg = body.mass_kg.unwrap_or(0.0);
                let after =
                    Kinematics::of(&self.physics.bodies[body.handle], &self.units).linvel_m_s;
                let gravity = Vector3::from(self.settings.gravity_m_s2);
                let normal: Vector3<f64> = contacts.iter().map(|c| c.normal * c.impulse_n_s).sum();
                let friction = mass_kg
                    * (after - before.linvel_m_s - gravity * self.settings.time_step_s)
                    - normal;
                friction / normal_total_n_s
            }
            _ => Vector3::zeros(),
        }
    }

    /// Records the event of a check that cracked its body and replaces the
    /// body by its pieces if the cracks split it; the event's times if it
    /// cracked.
    fn finish_check(
        &mut self,
        contacts: &[BodyContact],
        before: Kinematics,
        (time_s, step): (f64, u64),
        check: CheckPlan,
        result: CheckResult,
    ) -> Option<EventTimes> {
        let (id, kind) = (check.id, check.kind);
        let outcome = result.outcome;
        tracing::debug!(
            body = id.0,
            ?kind,
            contacts = contacts.len(),
            peak_stress_pa = outcome.peak_stress_pa,
            impactor_kg = ?check.points.iter().map(|p| p.impactor.mass_kg).collect::<Vec<_>>(),
            approach_m_s = ?check.points.iter().map(|p| p.relative_speed_m_s).collect::<Vec<_>>(),
            gap_m = ?check.points.iter().map(|p| p.gap_m).collect::<Vec<_>>(),
            face_corners = check.points.iter().filter(|p| p.face.is_some()).count()
                + check.loads.iter().filter(|l| l.face.is_some()).count(),
            contact_peak_n = outcome.contact.peak_force_n,
            contact_s = outcome.contact.duration_s,
            contact_impulse_n_s = outcome.contact.impulse_n_s,
            restitution = outcome.contact.restitution,
            contact_steps = outcome.contact.steps,
            contact_end = ?outcome.contact.end,
            cracks = outcome.cracks.len(),
            check_s = result.check_s,
            "fracture check"
        );
        if outcome.cracks.is_empty() {
            return None;
        }
        let mut times = EventTimes {
            check_s: result.check_s,
            insertion_s: 0.0,
        };
        let contact_impulse = contacts
            .iter()
            .map(|c| c.normal * c.impulse_n_s)
            .sum::<Vector3<f64>>();
        let body = self.body(id).expect("checked above");
        let parent_mass_kg = body.mass_kg.unwrap_or(0.0);
        let linvel = Kinematics::of(&self.physics.bodies[body.handle], &self.units).linvel_m_s;
        let mut event = FractureEvent {
            time_s,
            step,
            body: id,
            name: body.name.clone(),
            kind,
            contacts: check.used_contacts,
            impulse_n_s: check.used_impulse_n_s,
            peak_stress_pa: outcome.peak_stress_pa,
            cracks: outcome.cracks.len(),
            crack_area_m2: outcome
                .cracks
                .iter()
                .map(|c| c.area_m2)
                .fold(0.0, |a, b| a + b),
            fragments: Vec::new(),
            debris: 0,
            debris_mass_kg: 0.0,
            debris_momentum_n_s: [0.0; 3],
            parent_mass_kg,
            fragments_mass_kg: 0.0,
            momentum_before_n_s: (before.linvel_m_s * parent_mass_kg).into(),
            contact_impulse_n_s: contact_impulse.into(),
            momentum_after_n_s: (linvel * parent_mass_kg).into(),
            fragments_momentum_n_s: [0.0; 3],
            pattern: None,
        };
        let (pieces, basis_jobs) = (result.pieces, result.basis_jobs);
        if pieces.len() > 1 {
            if self.record_patterns {
                event.pattern = self
                    .body(id)
                    .and_then(|b| b.breakable.as_ref())
                    .and_then(|b| b.body.pattern(&pieces));
            }
            let t = Instant::now();
            self.replace_by_fragments(id, &pieces, basis_jobs, &mut event);
            times.insertion_s = t.elapsed().as_secs_f64();
        }
        tracing::info!(
            body = %event.name,
            time_s = event.time_s,
            cracks = event.cracks,
            fragments = event.fragments.len(),
            "fracture"
        );
        self.events.push(event);
        Some(times)
    }

    /// The other body of a contact with `body`, for the Hertz contact: its
    /// mass (infinite for a static body), material and radius of curvature,
    /// and the pair's restitution, the mean of the two bodies' as the
    /// solver combines them; a collider without a body is taken as a fixed
    /// steel sphere of the steel ball's radius, with `body`'s restitution.
    pub(super) fn impactor(&self, body: BodyId, other: Option<BodyId>) -> Impactor {
        let own = self.body(body).map_or(1.0, |b| b.restitution);
        match other.and_then(|o| self.body(o)) {
            Some(other) => Impactor {
                mass_kg: other.mass_kg.unwrap_or(f64::INFINITY),
                youngs_modulus_pa: other.material.youngs_modulus_pa,
                poisson_ratio: other.material.poisson_ratio,
                radius_m: other.contact_radius_m,
                restitution: 0.5 * (own + other.restitution),
            },
            None => Impactor {
                mass_kg: f64::INFINITY,
                restitution: own,
                ..Impactor::steel_ball()
            },
        }
    }

    /// Removes body `id` and inserts one body per piece, each moving with
    /// the parent's rigid motion at its own centre of mass (so the pieces'
    /// momentum is the parent's). Pieces below `debris_volume_m3`, and
    /// pieces whose surface has no volume for a hull, are removed as debris.
    ///
    /// `basis_jobs`, if not empty, holds each piece's own-basis analysis
    /// (prepared with the check); otherwise they are prepared here.
    fn replace_by_fragments(
        &mut self,
        id: BodyId,
        pieces: &[Fragment],
        mut basis_jobs: Vec<Option<BasisJob>>,
        event: &mut FractureEvent,
    ) {
        let parent = self.bodies[id.0 as usize].take().expect("the body exists");
        let rb = &self.physics.bodies[parent.handle];
        let pose_sim = *rb.position();
        let pose = self.units.pose_to_si(&pose_sim);
        let (linvel, angvel) = (self.units.to_si(rb.linvel()), vector(rb.angvel()));
        let com = self.units.point_to_si(rb.center_of_mass());
        self.physics.remove_body(parent.handle);
        let breakable = parent
            .breakable
            .as_ref()
            .expect("a broken body is breakable");
        if let Some(load) = breakable.body.last_impact_stress() {
            self.split_loads.push((id, load));
        }
        let mut momentum = Vector3::zeros();
        let mut debris_momentum = Vector3::zeros();
        for (i, piece) in pieces.iter().enumerate() {
            let velocity = linvel + angvel.cross(&(pose * piece.centroid_m - com));
            let shape = (piece.volume_m3 >= self.settings.debris_volume_m3)
                .then(|| fragment_shape(piece, &self.units))
                .flatten();
            let Some(shape) = shape else {
                event.debris += 1;
                event.debris_mass_kg += piece.mass_kg;
                debris_momentum += velocity * piece.mass_kg;
                continue;
            };
            let mass_properties = MassProperties::with_inertia_matrix(
                self.units.point_to_sim(&piece.centroid_m),
                piece.mass_kg as f32,
                self.units.inertia_to_sim(&piece.inertia_kg_m2),
            );
            let body = speculative::dynamic_body()
                .pose(pose_sim)
                .linvel(self.units.to_sim(&velocity))
                .angvel(glam(&angvel));
            let collider = ColliderBuilder::new(shape.clone())
                .mass_properties(mass_properties)
                .friction(parent.friction as f32)
                .restitution(parent.restitution as f32);
            let (handle, _) = self.physics.insert(body, collider);
            let intact = piece
                .tets
                .iter()
                .filter(|&&t| !breakable.body.state().is_damaged(t as usize))
                .count();
            let child_breakable = (!piece.is_gap && intact >= self.settings.breakable_min_tets)
                .then(|| Breakable {
                    body: breakable.body.fragment_body(piece),
                    last_static_check_s: self.time_s,
                    last_static_force_n: 0.0,
                    checking: false,
                });
            momentum += velocity * piece.mass_kg;
            event.fragments_mass_kg += piece.mass_kg;
            let child = self.push_body(WorldBody {
                name: format!("{}/{}", parent.name, piece.id),
                handle,
                material: Arc::clone(&parent.material),
                mass_kg: Some(piece.mass_kg),
                volume_m3: piece.volume_m3,
                contact_radius_m: contact_radius_m(&shape, &self.units),
                friction: parent.friction,
                restitution: parent.restitution,
                surface: Arc::new(Surface {
                    points: piece.points.clone(),
                    triangles: piece.triangles.clone(),
                    crack_triangles: piece.crack_triangles.clone(),
                }),
                breakable: child_breakable,
                parent: Some(id),
            });
            if self.body(child).is_some_and(|b| b.breakable.is_some()) {
                let job = if basis_jobs.is_empty() {
                    self.own_basis_job(&breakable.body, piece)
                } else {
                    basis_jobs[i].take()
                };
                if let Some(job) = job {
                    self.queue_own_basis(&breakable.body, job, child);
                }
            }
            event.fragments.push(child);
        }
        event.fragments_momentum_n_s = momentum.into();
        event.debris_momentum_n_s = debris_momentum.into();
    }
}

/// Runs one planned check on `body`: the impact or the held loads, then
/// the fragment meshes if it cracked.
pub(super) fn run_check(
    plan: &CheckPlan,
    body: &mut crate::fracture::BreakableBody,
    settings: &crate::fracture::FractureSettings,
    threads: &rayon::ThreadPool,
) -> CheckResult {
    let start = Instant::now();
    let mut engine = crate::fracture::Counters::default();
    let outcome = match plan.kind {
        FractureKind::Impact => body.impact(&plan.points, settings, threads, &mut engine),
        FractureKind::Static => body.static_load(&plan.loads, settings, threads, &mut engine),
    };
    let pieces = if outcome.cracks.is_empty() {
        Vec::new()
    } else {
        body.fragments(threads)
    };
    CheckResult {
        outcome,
        pieces,
        basis_jobs: Vec::new(),
        engine,
        check_s: start.elapsed().as_secs_f64(),
    }
}

/// Which of a body's `contacts` are corners of one face-to-face contact
/// (`ContactPoint::face`): three or more with the same other body and
/// normal (to 2.6°) whose points span a polygon, not a line (an edge
/// landing) or a point; the group is named by its first contact's index.
/// Colliders without a body are spheres to the impact (`impactor`), so
/// their contacts are points.
fn face_contacts(contacts: &[BodyContact]) -> Vec<Option<u32>> {
    let mut faces = vec![None; contacts.len()];
    for (first, c) in contacts.iter().enumerate() {
        if faces[first].is_some() {
            continue;
        }
        let group: Vec<usize> = (first..contacts.len())
            .filter(|&i| {
                faces[i].is_none()
                    && c.other.is_some()
                    && contacts[i].other == c.other
                    && contacts[i].normal.dot(&c.normal) > 0.999
            })
            .collect();
        if group.len() < 3 {
            continue;
        }
        let points: Vec<Point3<f64>> = group.iter().map(|&i| contacts[i].point_m).collect();
        let far = points
            .iter()
            .max_by(|a, b| (*a - points[0]).norm().total_cmp(&(*b - points[0]).norm()))
            .expect("three points");
        let axis = far - points[0];
        let length = axis.norm();
        let width = points
            .iter()
            .map(|p| (p - points[0]).cross(&axis).norm() / length.max(f64::MIN_POSITIVE))
            .fold(0.0, f64::max);
        if length > 0.0 && width > 1e-2 * length {
            for i in group {
                faces[i] = Some(first as u32);
            }
        }
    }
    faces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contact(other: Option<u32>, x: f64, y: f64, normal: Vector3<f64>) -> BodyContact {
        BodyContact {
            body: BodyId(0),
            other: other.map(BodyId),
            point_m: Point3::new(x, y, 0.0),
            normal,
            impulse_n_s: 0.1,
            approach_speed_m_s: 0.6,
            gap_m: 0.0,
        }
    }

    #[test]
    fn corners_spanning_a_polygon_are_one_face_contact() {
        let up = Vector3::z();
        let tilted = Vector3::new(0.1, 0.0, 1.0).normalize();
        let contacts = [
            // The floor's four corners under a tile...
            contact(Some(1), -0.07, -0.07, up),
            contact(Some(1), 0.07, -0.07, up),
            contact(Some(2), 0.0, 0.0, up),
            contact(Some(1), 0.07, 0.07, up),
            contact(Some(1), -0.07, 0.07, up),
            // ... and a ball's points along one line, two of a plate on
            // another normal, and colliders without a body.
            contact(Some(3), 0.0, 0.0, up),
            contact(Some(3), 0.01, 0.0, up),
            contact(Some(3), 0.02, 0.0, up),
            contact(Some(4), 0.0, 0.0, tilted),
            contact(Some(4), 0.0, 0.01, tilted),
            contact(Some(4), 0.01, 0.01, up),
            contact(None, -0.07, -0.07, up),
            contact(None, 0.07, -0.07, up),
            contact(None, 0.07, 0.07, up),
        ];
        let faces = face_contacts(&contacts);
        assert_eq!(
            faces,
            [
                Some(0),
                Some(0),
                None,
                Some(0),
                Some(0),
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None
            ]
        );
    }
}
