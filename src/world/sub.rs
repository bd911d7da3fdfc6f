//! The haptic sub-world (Glondu 2012 §4.3.3): a second rapier world, stepped
//! by the haptic thread at 1 kHz, holding the proxy and the bodies around it
//! that the global world hands over at each synchronisation.
//!
//! What crosses between the two worlds: [`SubWorldUpdate`] (global → sub:
//! membership, new members' shapes and states, border contacts) and
//! [`SubWorldReport`] (sub → global: member states, contacts on breakable
//! members, friction impulses at the border, the sub-world's contact graph).
//! Both are plain buffers that keep their capacity, so the haptic thread
//! reuses them without allocating.

use super::contacts::{
    body_id, inverse_mass_along, solver_contacts, touching, world_inv_inertia, BodyContact,
    Kinematics,
};
use super::units::{vector, Units};
use super::BodyId;
use crate::config::WorldSettings;
use nalgebra::{Isometry3, Matrix3, Point3, Vector3};
use rapier3d::dynamics::{MassProperties, RigidBodyBuilder, RigidBodyHandle, SpringCoefficients};
use rapier3d::geometry::{ColliderBuilder, SharedShape};
use rapier3d::glamx::{Pose3, Vec3};
use rapier3d::pipeline::PhysicsWorld;

/// A body entering the sub-world, as the global world last saw it.
#[derive(Clone)]
pub struct MemberBody {
    /// The body.
    pub id: BodyId,
    /// Whether it never moves.
    pub is_static: bool,
    /// Whether it can break (its contacts are reported).
    pub breakable: bool,
    pub(super) shape: SharedShape,
    pub(super) mass: MassProperties,
    pub(super) pose: Pose3,
    pub(super) linvel: Vec3,
    pub(super) angvel: Vec3,
    pub(super) friction: f32,
    pub(super) restitution: f32,
    pub(super) ccd: bool,
}

/// A contact between a sub-world body and a global body outside it, with
/// the normal impulse the global world applied there in its last step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BorderContact {
    /// The member.
    pub body: BodyId,
    /// The global body outside the sub-world.
    pub outside: BodyId,
    /// Contact point (m).
    pub point_m: Point3<f64>,
    /// Unit normal into `body`.
    pub normal: Vector3<f64>,
    /// Over the global step (N·s).
    pub impulse_n_s: f64,
    /// Coulomb coefficient at the contact.
    pub friction: f64,
}

/// Global → sub-world, at each synchronisation.
#[derive(Clone, Default)]
pub struct SubWorldUpdate {
    /// Every member, ascending id (the proxy included).
    pub members: Vec<BodyId>,
    /// Members the sub-world does not hold yet.
    pub added: Vec<MemberBody>,
    /// Contacts between members and bodies outside, with their impulses.
    pub border: Vec<BorderContact>,
    /// The global step the border impulses were applied over (s).
    pub global_dt_s: f64,
}

/// A member's state in the sub-world (SI).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemberState {
    /// The member.
    pub id: BodyId,
    /// Pose of its frame (m).
    pub pose: Isometry3<f64>,
    /// Linear velocity (m/s).
    pub linvel_m_s: Vector3<f64>,
    /// Angular velocity (rad/s).
    pub angvel_rad_s: Vector3<f64>,
}

/// The summed friction-point impulse on a global body at the border.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrictionImpulse {
    /// The global body outside the sub-world.
    pub outside: BodyId,
    /// Application point (m).
    pub point_m: Point3<f64>,
    /// Summed impulse (N·s).
    pub impulse_n_s: Vector3<f64>,
}

/// Sub-world → global, at each synchronisation.
#[derive(Debug, Clone, Default)]
pub struct SubWorldReport {
    /// Dynamic members, ascending id.
    pub states: Vec<MemberState>,
    /// Contacts on breakable members since the last report, one per pair
    /// of bodies: impulses summed, point and normal impulse-weighted, the
    /// largest approach speed.
    pub contacts: Vec<BodyContact>,
    /// Friction-point impulses on bodies at the border.
    pub friction: Vec<FrictionImpulse>,
    /// Pairs of members in contact (the sub-world's contact graph).
    pub edges: Vec<(BodyId, BodyId)>,
    /// The proxy and the mean coupling force and torque on it since the
    /// last report (SI): the global twin carries the same load.
    pub proxy_wrench: Option<(BodyId, Vector3<f64>, Vector3<f64>)>,
    /// Steps from the first strike of a breakable member since the last
    /// report to this report (0: struck in the last step); `None` without
    /// a strike.
    pub first_strike_steps_before: Option<u32>,
}

impl SubWorldReport {
    /// Empties the report, keeping its allocations.
    pub fn clear(&mut self) {
        self.states.clear();
        self.contacts.clear();
        self.friction.clear();
        self.edges.clear();
        self.proxy_wrench = None;
        self.first_strike_steps_before = None;
    }
}

/// The proxy's state, for the coupling (SI, world axes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProxyBody {
    /// The pose of the centre of mass (principal axes not implied).
    pub com_pose: Isometry3<f64>,
    /// Linear velocity (m/s).
    pub linvel_m_s: Vector3<f64>,
    /// Angular velocity (rad/s).
    pub angvel_rad_s: Vector3<f64>,
    /// Mass (kg).
    pub mass_kg: f64,
    /// Inertia tensor about the centre of mass, world axes (kg·m²).
    pub inertia_kg_m2: Matrix3<f64>,
}

#[derive(Debug, Clone, Copy)]
struct Member {
    id: BodyId,
    handle: RigidBodyHandle,
    breakable: bool,
    is_static: bool,
}

/// A friction point (§4.3.3.1): the body's point stays on the contact's
/// normal line until the tangential impulse needed exceeds `μ·i`.
#[derive(Debug, Clone, Copy)]
struct FrictionPoint {
    contact: BorderContact,
    handle: RigidBodyHandle,
    /// The point in the body's frame (m).
    local_point_m: Point3<f64>,
    /// Where the line passes (m).
    anchor_m: Point3<f64>,
    /// Tangential impulse applied since the last report (N·s).
    impulse_sum_n_s: Vector3<f64>,
}

/// Natural frequency and damping ratio of the sub-world's contacts.
const CONTACT_FREQUENCY_HZ: f32 = 200.0;
const CONTACT_DAMPING_RATIO: f32 = 5.0;

/// Baumgarte factor pulling a friction point back onto its line.
const FRICTION_POINT_ERP: f64 = 0.2;

/// The sub-world.
pub struct SubWorld {
    physics: PhysicsWorld,
    units: Units,
    dt_s: f64,
    /// Ascending id.
    members: Vec<Member>,
    friction_points: Vec<FrictionPoint>,
    global_dt_s: f64,
    /// Scratch: members' kinematics before the step, by member index.
    before: Vec<Kinematics>,
    /// Contacts on breakable members since the last report.
    contacts: Vec<BodyContact>,
    /// A contact approaching faster than this is an impact (m/s).
    impact_speed_m_s: f64,
    /// Breakable members struck since the last report, with their
    /// kinematics before the step that struck them.
    struck: Vec<(BodyId, Kinematics)>,
    /// Scratch: members struck in this step.
    struck_now: Vec<BodyId>,
    /// The proxy, its summed wrench and the steps since the last report.
    proxy_wrench: Option<(BodyId, Vector3<f64>, Vector3<f64>)>,
    steps_since_report: u32,
    /// The step (counted since the last report, from 1) of the report's
    /// first strike.
    first_strike_step: Option<u32>,
}

impl SubWorld {
    /// An empty sub-world with the scene's gravity, units and solver.
    pub fn new(settings: &WorldSettings, dt_s: f64) -> Self {
        let units = Units {
            z_fact: settings.z_fact,
        };
        let mut physics = PhysicsWorld::new();
        physics.gravity = units.to_sim(&Vector3::from(settings.gravity_m_s2));
        physics.integration_parameters.dt = dt_s as f32;
        physics.integration_parameters.num_solver_iterations = settings.solver_iterations;
        // Stiff contacts: at 1 kHz rapier's soft-contact defaults (30 Hz,
        // made for 60 Hz games) let a hand pressing 50 N sink the proxy
        // millimetres into a tile.
        physics.integration_parameters.contact_softness =
            SpringCoefficients::new(CONTACT_FREQUENCY_HZ, CONTACT_DAMPING_RATIO);
        physics.integration_parameters.static_contact_softness =
            SpringCoefficients::new(2.0 * CONTACT_FREQUENCY_HZ, CONTACT_DAMPING_RATIO);
        // No CCD: rapier sweeps every body faster than half its thinnest
        // extent per step against fixed colliders, rebuilding each convex
        // hull's mass properties (allocating) per sweep: milliseconds per
        // tick among fresh fragments. At 1 ms steps a body would need
        // 10 m/s to move 1 cm, and a tunnelled body is corrected by the
        // global world's state at the next synchronisation.
        physics.integration_parameters.max_ccd_substeps = 0;
        Self {
            physics,
            units,
            dt_s,
            members: Vec::new(),
            friction_points: Vec::new(),
            global_dt_s: dt_s,
            before: Vec::new(),
            contacts: Vec::new(),
            impact_speed_m_s: settings.impact_speed_m_s,
            struck: Vec::with_capacity(8),
            struck_now: Vec::with_capacity(8),
            proxy_wrench: None,
            steps_since_report: 0,
            first_strike_step: None,
        }
    }

    /// Members, ascending id.
    pub fn members(&self) -> impl Iterator<Item = BodyId> + '_ {
        self.members.iter().map(|m| m.id)
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether there is no member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Border contacts held as friction points.
    pub fn border_contacts(&self) -> usize {
        self.friction_points.len()
    }

    fn member(&self, id: BodyId) -> Option<&Member> {
        self.members
            .binary_search_by_key(&id, |m| m.id)
            .ok()
            .map(|i| &self.members[i])
    }

    /// Takes the global world's membership and border for the next cycle:
    /// members that left are removed, new ones inserted with the global
    /// state, every border contact becomes a friction point.
    pub fn apply(&mut self, update: &SubWorldUpdate) {
        let physics = &mut self.physics;
        self.members.retain(|m| {
            let keep = update.members.binary_search(&m.id).is_ok();
            if !keep {
                physics.remove_body(m.handle);
            }
            keep
        });
        for body in &update.added {
            if self
                .members
                .binary_search_by_key(&body.id, |m| m.id)
                .is_ok()
            {
                continue;
            }
            let builder = if body.is_static {
                RigidBodyBuilder::fixed()
            } else {
                RigidBodyBuilder::dynamic()
                    .linvel(body.linvel)
                    .angvel(body.angvel)
                    .ccd_enabled(body.ccd)
            }
            .pose(body.pose)
            .user_data(u128::from(body.id.0));
            let collider = ColliderBuilder::new(body.shape.clone())
                .mass_properties(body.mass)
                .friction(body.friction)
                .restitution(body.restitution);
            let (handle, _) = self.physics.insert(builder, collider);
            let at = self.members.partition_point(|m| m.id < body.id);
            self.members.insert(
                at,
                Member {
                    id: body.id,
                    handle,
                    breakable: body.breakable,
                    is_static: body.is_static,
                },
            );
        }
        // Every member may be struck within one report: room for all of
        // them now, so that the haptic steps never grow these lists.
        let members = self.members.len();
        self.struck
            .reserve(members.saturating_sub(self.struck.len()));
        self.struck_now
            .reserve(members.saturating_sub(self.struck_now.len()));
        self.global_dt_s = update.global_dt_s.max(self.dt_s);
        self.friction_points.clear();
        for contact in &update.border {
            let Some(member) = self.member(contact.body).copied() else {
                continue;
            };
            let pose = self
                .units
                .pose_to_si(self.physics.bodies[member.handle].position());
            self.friction_points.push(FrictionPoint {
                contact: *contact,
                handle: member.handle,
                local_point_m: pose.inverse_transform_point(&contact.point_m),
                anchor_m: contact.point_m,
                impulse_sum_n_s: Vector3::zeros(),
            });
        }
    }

    /// The proxy's state; `None` if it is not a dynamic member.
    pub fn proxy(&self, id: BodyId) -> Option<ProxyBody> {
        let member = self.member(id).filter(|m| !m.is_static)?;
        let rb = &self.physics.bodies[member.handle];
        let inv_inertia = world_inv_inertia(rb, &self.units);
        let pose = self.units.pose_to_si(rb.position());
        let com = self.units.point_to_si(rb.center_of_mass());
        Some(ProxyBody {
            com_pose: Isometry3::from_parts(com.coords.into(), pose.rotation),
            linvel_m_s: self.units.to_si(rb.linvel()),
            angvel_rad_s: vector(rb.angvel()),
            mass_kg: f64::from(rb.mass()),
            inertia_kg_m2: inv_inertia.try_inverse().unwrap_or_else(Matrix3::zeros),
        })
    }

    /// One haptic step: border impulses and friction points (§4.3.3.1),
    /// the coupling wrench on the proxy (SI, held over the step), rapier's
    /// step, then the contacts on breakable members are accumulated.
    pub fn step(&mut self, proxy: BodyId, force_n: &Vector3<f64>, torque_n_m: &Vector3<f64>) {
        let units = self.units;
        self.before.clear();
        for m in &self.members {
            self.before
                .push(Kinematics::of(&self.physics.bodies[m.handle], &units));
        }
        self.border_impulses();
        if let Some(member) = self.member(proxy).copied() {
            let rb = &mut self.physics.bodies[member.handle];
            rb.reset_forces(false);
            rb.reset_torques(false);
            rb.add_force(units.to_sim(force_n), true);
            rb.add_torque(units.torque_to_sim(torque_n_m), true);
        }
        self.physics.step();
        self.steps_since_report += 1;
        let (_, force, torque) =
            self.proxy_wrench
                .get_or_insert((proxy, Vector3::zeros(), Vector3::zeros()));
        *force += force_n;
        *torque += torque_n_m;
        self.accumulate_contacts();
    }

    /// Applies each border contact's share of the global normal impulse and
    /// holds its friction point, releasing it above `μ·i` (Coulomb).
    fn border_impulses(&mut self) {
        let units = self.units;
        let share = self.dt_s / self.global_dt_s;
        let bodies = &mut self.physics.bodies;
        for fp in &mut self.friction_points {
            let rb = &mut bodies[fp.handle];
            if !rb.is_dynamic() {
                continue;
            }
            let c = &fp.contact;
            let pose = units.pose_to_si(rb.position());
            let point = pose * fp.local_point_m;
            let normal_impulse = c.normal * (c.impulse_n_s * share);
            rb.apply_impulse_at_point(
                units.to_sim(&normal_impulse),
                units.point_to_sim(&point),
                true,
            );
            // The tangential impulse that brings the point's tangential
            // velocity to what pulls it back onto the line.
            let n = c.normal;
            let drift = point - fp.anchor_m;
            let drift_t = drift - n * n.dot(&drift);
            let com = units.point_to_si(rb.center_of_mass());
            let velocity = units.to_si(rb.linvel()) + vector(rb.angvel()).cross(&(point - com));
            let velocity_t = velocity - n * n.dot(&velocity);
            let target = velocity_t + drift_t * (FRICTION_POINT_ERP / self.dt_s);
            let speed = target.norm();
            if speed < 1e-12 {
                continue;
            }
            let t = target / speed;
            let mut magnitude = speed / inverse_mass_along(rb, &units, &com, &point, &t);
            let limit = c.friction * c.impulse_n_s * share;
            if magnitude > limit {
                // Sliding: the line follows the point.
                magnitude = limit;
                fp.anchor_m = point;
            }
            let impulse = -t * magnitude;
            rb.apply_impulse_at_point(units.to_sim(&impulse), units.point_to_sim(&point), true);
            fp.impulse_sum_n_s += impulse;
        }
    }

    fn accumulate_contacts(&mut self) {
        if !self.members.iter().any(|m| m.breakable) {
            return;
        }
        let members = &self.members;
        let before = &self.before;
        let index = |id: BodyId| members.binary_search_by_key(&id, |m| m.id).ok();
        // A report spans several haptic steps, the global step one. Within
        // it, a struck body moves off and meets its supports a step later,
        // at a speed the strike gave it: in one global step (and to the
        // fracture engine, which computes the supports' reaction during
        // the impact) that is a support loaded by the impact, not a second
        // impact. So a struck body's later contacts of the report are
        // measured from its motion before the strike.
        let struck = &self.struck;
        let kinematics = |id: BodyId| {
            struck
                .iter()
                .find(|(s, _)| *s == id)
                .map(|(_, k)| *k)
                .or_else(|| index(id).map(|i| before[i]))
                .unwrap_or_default()
        };
        let wanted = |id: BodyId| index(id).is_some_and(|i| members[i].breakable);
        let contacts = &mut self.contacts;
        let impact_speed_m_s = self.impact_speed_m_s;
        let struck_now = &mut self.struck_now;
        solver_contacts(&self.physics, &self.units, &kinematics, &wanted, &mut |c| {
            if c.approach_speed_m_s > impact_speed_m_s
                && !struck.iter().any(|(s, _)| *s == c.body)
                && !struck_now.contains(&c.body)
            {
                struck_now.push(c.body);
            }
            match contacts
                .iter_mut()
                .find(|a| a.body == c.body && a.other == c.other)
            {
                Some(a) => {
                    // Impulse-weighted point and normal; the largest approach.
                    let total = a.impulse_n_s + c.impulse_n_s;
                    let w = c.impulse_n_s / total;
                    a.point_m = a.point_m + (c.point_m - a.point_m) * w;
                    a.normal = a.normal * (1.0 - w) + c.normal * w;
                    a.impulse_n_s = total;
                    a.approach_speed_m_s = a.approach_speed_m_s.max(c.approach_speed_m_s);
                }
                None => contacts.push(c),
            }
        });
        if !self.struck_now.is_empty() && self.first_strike_step.is_none() {
            self.first_strike_step = Some(self.steps_since_report);
        }
        for id in self.struck_now.drain(..) {
            if let Some(i) = index(id) {
                self.struck.push((id, self.before[i]));
            }
        }
    }

    /// Writes what the global world needs and starts a new cycle: member
    /// states, accumulated contacts, friction sums, the contact graph.
    pub fn report(&mut self, out: &mut SubWorldReport) {
        out.clear();
        if let Some((proxy, force, torque)) = self.proxy_wrench.take() {
            let n = f64::from(self.steps_since_report.max(1));
            out.proxy_wrench = Some((proxy, force / n, torque / n));
        }
        out.first_strike_steps_before = self
            .first_strike_step
            .take()
            .map(|step| self.steps_since_report.saturating_sub(step));
        self.steps_since_report = 0;
        self.struck.clear();
        for m in &self.members {
            if m.is_static {
                continue;
            }
            let rb = &self.physics.bodies[m.handle];
            out.states.push(MemberState {
                id: m.id,
                pose: self.units.pose_to_si(rb.position()),
                linvel_m_s: self.units.to_si(rb.linvel()),
                angvel_rad_s: vector(rb.angvel()),
            });
        }
        for mut c in self.contacts.drain(..) {
            c.normal = c.normal.try_normalize(1e-12).unwrap_or(c.normal);
            out.contacts.push(c);
        }
        for fp in &mut self.friction_points {
            if fp.impulse_sum_n_s != Vector3::zeros() {
                out.friction.push(FrictionImpulse {
                    outside: fp.contact.outside,
                    point_m: fp.contact.point_m,
                    impulse_n_s: -fp.impulse_sum_n_s,
                });
                fp.impulse_sum_n_s = Vector3::zeros();
            }
        }
        let bodies = &self.physics.bodies;
        for pair in self.physics.narrow_phase.contact_pairs() {
            if !touching(pair) {
                continue;
            }
            let body = |c| self.physics.colliders.get(c).and_then(|c| c.parent());
            let a = body_id(bodies, body(pair.collider1));
            let b = body_id(bodies, body(pair.collider2));
            if let (Some(a), Some(b)) = (a, b) {
                out.edges.push((a.min(b), a.max(b)));
            }
        }
    }

    /// A hash of every member's id, pose and velocities (bit patterns).
    pub fn state_hash(&self) -> u64 {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for m in &self.members {
            super::hash_body_state(&mut hasher, m.id, &self.physics.bodies[m.handle]);
        }
        hasher.digest()
    }
}
