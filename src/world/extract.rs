//! The global world's side of the haptic sub-world (Glondu 2012 §4.3.3.1):
//! which bodies the sub-world holds (the contact graph from the proxy, up
//! to a body count, plus every body meeting the boundary cube), the border
//! contacts and their impulses, and the sub-world's results imposed back.
//!
//! A body in the sub-world keeps a dynamic twin here whose pose and
//! velocities are reset to the sub-world's at every synchronisation (the
//! "impose the positions of the sub-world bodies" of §4.3.3.1). Between
//! syncs the twin feels gravity and its neighbours, so the impulses at its
//! contacts with bodies outside are the loads they carry: the border
//! impulses sent back down. Its own contacts do not feed the fracture
//! engine: a breakable member's contacts come from the sub-world.

use super::contacts::{solver_contacts, touching, BodyContact, Kinematics};
use super::sub::{BorderContact, MemberBody, SubWorldReport, SubWorldUpdate};
use super::units::glam;
use super::{BodyId, World};
use nalgebra::{Point3, Vector3};
use std::collections::{BTreeSet, VecDeque};

/// How the sub-world is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extraction {
    /// The body the device holds.
    pub proxy: BodyId,
    /// Most dynamic bodies the contact graph adds (the proxy excluded).
    pub max_graph_bodies: usize,
    /// Most dynamic bodies in the sub-world besides the proxy.
    pub max_bodies: usize,
    /// Most bodies one synchronisation brings in.
    pub max_added_per_sync: usize,
    /// Side of the boundary cube around the proxy, `c_size + 2·p_max` (m).
    pub boundary_side_m: f64,
    /// Direct coupling: the sub-world is the whole world.
    pub everything: bool,
}

impl World {
    /// Imposes the sub-world's results before the next global step: member
    /// poses (reached at the end of the step, moving with the reported
    /// velocities) and the friction impulses on the bodies outside. Its
    /// contacts on breakable members go to the step itself
    /// ([`super::StepInputs`]).
    pub fn apply_sub_world(&mut self, report: &SubWorldReport) {
        for state in &report.states {
            let Some(body) = self.body(state.id) else {
                continue;
            };
            let handle = body.handle;
            if let Some(placement) = self.placements.get_mut(state.id.0 as usize) {
                *placement = None;
            }
            let rb = &mut self.physics.bodies[handle];
            rb.set_position(self.units.pose_to_sim(&state.pose), true);
            rb.set_linvel(self.units.to_sim(&state.linvel_m_s), true);
            rb.set_angvel(glam(&state.angvel_rad_s), true);
        }
        for friction in &report.friction {
            let Some(handle) = self.body(friction.outside).map(|b| b.handle) else {
                continue;
            };
            let rb = &mut self.physics.bodies[handle];
            if rb.is_dynamic() {
                rb.apply_impulse_at_point(
                    self.units.to_sim(&friction.impulse_n_s),
                    self.units.point_to_sim(&friction.point_m),
                    true,
                );
            }
        }
        if let Some((proxy, force, torque)) = report.proxy_wrench {
            if let Some(handle) = self.body(proxy).map(|b| b.handle) {
                let rb = &mut self.physics.bodies[handle];
                rb.reset_forces(false);
                rb.reset_torques(false);
                rb.add_force(self.units.to_sim(&force), true);
                rb.add_torque(self.units.torque_to_sim(&torque), true);
            }
        }
    }

    /// Chooses the sub-world for the next cycle from the state after the
    /// last global step and writes what the sub-world must change into
    /// `out`, its new members (ascending) in `out.members`. `previous` are
    /// the members so far (ascending; empty at the start); `edges` are the
    /// sub-world's own contact pairs (its poses are newer than the twins'
    /// here).
    pub fn extract_sub_world(
        &self,
        extraction: &Extraction,
        edges: &[(BodyId, BodyId)],
        previous: &[BodyId],
        out: &mut SubWorldUpdate,
    ) {
        let chosen = self.choose_members(extraction, edges, previous);
        out.added.clear();
        for &id in &chosen {
            if previous.binary_search(&id).is_err() {
                out.added.extend(self.member_body(id));
            }
        }
        out.members.clear();
        out.members.extend(chosen);
        out.global_dt_s = self.settings.time_step_s;
        self.border_contacts(&out.members, &mut out.border);
        tracing::debug!(
            members = out.members.len(),
            border = out.border.len(),
            load_n_s = out.border.iter().map(|b| b.impulse_n_s).sum::<f64>(),
            "sub-world extracted"
        );
    }

    /// The proxy, the static bodies it can reach, and the dynamic bodies
    /// of the contact graph from it (breadth first, static bodies included
    /// but not crossed, up to `max_graph_bodies`) and of the boundary
    /// cube, ranked: the proxy's own contacts first, then by distance from
    /// the proxy. The first `max_bodies` are kept, of which at most
    /// `max_added_per_sync` may be new (not in `previous`); the others stay
    /// global (their contacts with members are border contacts) and come
    /// in later.
    fn choose_members(
        &self,
        extraction: &Extraction,
        edges: &[(BodyId, BodyId)],
        previous: &[BodyId],
    ) -> BTreeSet<BodyId> {
        let mut chosen = BTreeSet::new();
        if extraction.everything {
            chosen.extend(self.bodies().map(|(id, _)| id));
            return chosen;
        }
        let Some(proxy) = self.body(extraction.proxy) else {
            return chosen;
        };
        let centre = self
            .units
            .point_to_si(self.physics.bodies[proxy.handle].center_of_mass());
        chosen.insert(extraction.proxy);
        // (touches the proxy, distance from it, id) of each dynamic candidate.
        let mut ranked: Vec<(bool, f64, BodyId)> = Vec::new();
        let mut seen = BTreeSet::from([extraction.proxy]);
        let mut queue = VecDeque::from([extraction.proxy]);
        let mut neighbours = Vec::new();
        while let Some(id) = queue.pop_front() {
            neighbours.clear();
            self.contact_neighbours(id, &mut neighbours);
            neighbours.extend(
                edges.iter().filter_map(|&(a, b)| {
                    (a == id).then_some(b).or_else(|| (b == id).then_some(a))
                }),
            );
            for &n in &neighbours {
                let Some(body) = self.body(n) else { continue };
                if seen.contains(&n) {
                    continue;
                }
                if body.mass_kg.is_none() {
                    seen.insert(n);
                    chosen.insert(n);
                } else if ranked.len() < extraction.max_graph_bodies {
                    seen.insert(n);
                    let distance = self.aabb_distance_m(n, &centre).unwrap_or(f64::INFINITY);
                    ranked.push((id == extraction.proxy, distance, n));
                    queue.push_back(n);
                }
            }
        }
        let half = Vector3::repeat(extraction.boundary_side_m / 2.0);
        let cube = (centre - half, centre + half);
        for (id, body) in self.bodies() {
            if seen.contains(&id) {
                continue;
            }
            let Some((lo, hi)) = self.aabb_si(id) else {
                continue;
            };
            if (0..3).all(|i| lo[i] <= cube.1[i] && hi[i] >= cube.0[i]) {
                if body.mass_kg.is_none() {
                    chosen.insert(id);
                } else {
                    ranked.push((false, distance_to_box(&centre, &lo, &hi), id));
                }
            }
        }
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut added = 0;
        let mut kept = 0;
        for &(_, _, id) in &ranked {
            if kept == extraction.max_bodies {
                break;
            }
            if previous.binary_search(&id).is_err() {
                if added == extraction.max_added_per_sync {
                    continue;
                }
                added += 1;
            }
            chosen.insert(id);
            kept += 1;
        }
        // A member's static supports come with it: a body taken in through
        // the cube (not through the graph, which adds the static bodies it
        // meets) would otherwise fall through them in the sub-world, whose
        // border impulses are only those of dynamic bodies outside.
        for &(_, _, id) in &ranked {
            if !chosen.contains(&id) {
                continue;
            }
            neighbours.clear();
            self.contact_neighbours(id, &mut neighbours);
            for &n in &neighbours {
                if self.body(n).is_some_and(|b| b.mass_kg.is_none()) {
                    chosen.insert(n);
                }
            }
        }
        tracing::debug!(
            candidates = ranked.len(),
            kept,
            added,
            "sub-world members chosen"
        );
        chosen
    }

    /// The bounds of a body's colliders (m).
    fn aabb_si(&self, id: BodyId) -> Option<(Point3<f64>, Point3<f64>)> {
        let body = self.body(id)?;
        let rb = &self.physics.bodies[body.handle];
        let mut bounds: Option<(Point3<f64>, Point3<f64>)> = None;
        for &c in rb.colliders() {
            let aabb = self.physics.colliders[c].compute_aabb();
            let (a, b) = (
                self.units.point_to_si(aabb.mins),
                self.units.point_to_si(aabb.maxs),
            );
            bounds = Some(match bounds {
                Some((lo, hi)) => (lo.inf(&a), hi.sup(&b)),
                None => (a, b),
            });
        }
        bounds
    }

    fn aabb_distance_m(&self, id: BodyId, from: &Point3<f64>) -> Option<f64> {
        let (lo, hi) = self.aabb_si(id)?;
        Some(distance_to_box(from, &lo, &hi))
    }

    /// Bodies in active contact with `id` in the global world.
    fn contact_neighbours(&self, id: BodyId, out: &mut Vec<BodyId>) {
        let Some(body) = self.body(id) else { return };
        let physics = &self.physics;
        for &collider in physics.bodies[body.handle].colliders() {
            for pair in physics.narrow_phase.contact_pairs_with(collider) {
                if !touching(pair) {
                    continue;
                }
                let other = if pair.collider1 == collider {
                    pair.collider2
                } else {
                    pair.collider1
                };
                let other = physics
                    .colliders
                    .get(other)
                    .and_then(|c| c.parent())
                    .and_then(|h| physics.bodies.get(h))
                    .map(|b| BodyId(b.user_data as u32));
                out.extend(other);
            }
        }
    }

    /// A body as the sub-world needs it: shape, mass, state.
    fn member_body(&self, id: BodyId) -> Option<MemberBody> {
        let body = self.body(id)?;
        let rb = &self.physics.bodies[body.handle];
        let collider = &self.physics.colliders[*rb.colliders().first()?];
        Some(MemberBody {
            id,
            is_static: body.mass_kg.is_none(),
            breakable: body.breakable.is_some(),
            shape: collider.shared_shape().clone(),
            mass: collider.mass_properties(),
            pose: *rb.position(),
            linvel: rb.linvel(),
            angvel: rb.angvel(),
            friction: collider.friction(),
            restitution: collider.restitution(),
            ccd: rb.is_ccd_enabled(),
        })
    }

    /// Contacts of the last step between dynamic members and dynamic bodies
    /// outside, with the impulse the global world applied there.
    fn border_contacts(&self, members: &[BodyId], out: &mut Vec<BorderContact>) {
        out.clear();
        let is_member = |id: BodyId| members.binary_search(&id).is_ok();
        let dynamic = |id: BodyId| self.body(id).is_some_and(|b| b.mass_kg.is_some());
        let wanted = |id: BodyId| is_member(id) && dynamic(id);
        let still = Kinematics::default();
        let before = |id: BodyId| self.before.get(id.0 as usize).copied().unwrap_or(still);
        solver_contacts(
            &self.physics,
            &self.units,
            &before,
            &wanted,
            &mut |c: BodyContact| {
                let Some(outside) = c.other.filter(|&o| !is_member(o) && dynamic(o)) else {
                    return;
                };
                let friction = match (self.body(c.body), self.body(outside)) {
                    // rapier's default rule: the average.
                    (Some(a), Some(b)) => 0.5 * (a.friction + b.friction),
                    _ => 0.0,
                };
                out.push(BorderContact {
                    body: c.body,
                    outside,
                    point_m: c.point_m,
                    normal: c.normal,
                    impulse_n_s: c.impulse_n_s,
                    friction,
                });
            },
        );
    }

    /// Kinetic energy of the dynamic bodies other than `except` (J).
    pub fn kinetic_energy_j(&self, except: Option<BodyId>) -> f64 {
        self.bodies()
            .filter(|(id, _)| Some(*id) != except)
            .filter_map(|(id, _)| self.motion(id))
            .map(|m| m.kinetic_energy_j)
            .sum()
    }

    /// Where the centre of mass of a body is (m).
    pub fn center_of_mass(&self, id: BodyId) -> Option<Point3<f64>> {
        let body = self.body(id)?;
        Some(
            self.units
                .point_to_si(self.physics.bodies[body.handle].center_of_mass()),
        )
    }
}

/// Distance from a point to an axis-aligned box (0 inside).
fn distance_to_box(p: &Point3<f64>, lo: &Point3<f64>, hi: &Point3<f64>) -> f64 {
    let outside = (lo - p).sup(&Vector3::zeros()) + (p - hi).sup(&Vector3::zeros());
    outside.norm()
}
