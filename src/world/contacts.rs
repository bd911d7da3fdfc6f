//! Contact impulses of the last step, read from rapier's solver contacts and
//! grouped per breakable body.

use super::units::{vector, Units};
use super::{BodyId, World};
use nalgebra::{Point3, UnitQuaternion, Vector3};
use rapier3d::dynamics::{RigidBodyHandle, RigidBodySet};
use rapier3d::pipeline::PhysicsWorld;

/// One solver contact on a body, in SI units and world axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyContact {
    /// The body the contact acts on.
    pub body: BodyId,
    /// The other body (`None` for a collider without a body).
    pub other: Option<BodyId>,
    /// On the body's surface (m).
    pub point_m: Point3<f64>,
    /// Unit normal into the body: the direction the contact pushes it.
    pub normal: Vector3<f64>,
    /// Normal impulse of the step (N·s): the solver's, or after an impact
    /// check the one the check made the bodies exchange.
    pub impulse_n_s: f64,
    /// Normal speed at which the other body approached this one before the
    /// step (m/s; negative when separating). In the global world, no
    /// faster than the two moved over the step before where that is too
    /// slow for an impact (`World::gather_contacts`).
    pub approach_speed_m_s: f64,
}

/// A body's centre of mass and velocities before a step, in SI.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Kinematics {
    pub com_m: Point3<f64>,
    pub linvel_m_s: Vector3<f64>,
    pub angvel_rad_s: Vector3<f64>,
}

impl Kinematics {
    pub(super) fn of(body: &rapier3d::dynamics::RigidBody, units: &Units) -> Self {
        Self {
            com_m: units.point_to_si(body.center_of_mass()),
            linvel_m_s: units.to_si(body.linvel()),
            angvel_rad_s: vector(body.angvel()),
        }
    }

    pub(super) fn velocity_at(&self, point: &Point3<f64>) -> Vector3<f64> {
        self.linvel_m_s + self.angvel_rad_s.cross(&(point - self.com_m))
    }
}

/// A body's centre of mass and orientation before a step, in SI.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Placement {
    pub com_m: Point3<f64>,
    pub rotation: UnitQuaternion<f64>,
}

impl Placement {
    /// The velocities that take a body from `earlier` to `self` in `dt_s`,
    /// about the centre of mass at `self`.
    pub(super) fn moved_since(&self, earlier: &Placement, dt_s: f64) -> Kinematics {
        Kinematics {
            com_m: self.com_m,
            linvel_m_s: (self.com_m - earlier.com_m) / dt_s,
            angvel_rad_s: (self.rotation * earlier.rotation.inverse()).scaled_axis() / dt_s,
        }
    }
}

pub(super) fn body_id(bodies: &RigidBodySet, handle: Option<RigidBodyHandle>) -> Option<BodyId> {
    handle
        .and_then(|h| bodies.get(h))
        .map(|b| BodyId(b.user_data as u32))
}

impl World {
    /// Appends to `out` the contacts of the last step on the bodies for which
    /// `wanted` holds, in the narrow phase's (deterministic) order.
    ///
    /// A contact approaches at the speed of the two bodies' velocities
    /// before the step, unless at the velocities the two moved with over
    /// the step before (from their poses) it closes in no faster than an
    /// impact: it then takes that slower speed. The two differ by what
    /// changed a body's velocity after rapier's step: an impact check
    /// replaces the solver's impulses of a strike by its own
    /// (`apply_contact_impulses`), and the contacts that push leaves
    /// closing are supports the check already loaded (as in the
    /// sub-world). Counted as impacts, a fragment resting across a support
    /// and the ground was struck at every step, each check pushing it into
    /// the support again.
    pub(super) fn gather_contacts(
        &self,
        wanted: &dyn Fn(BodyId) -> bool,
        out: &mut Vec<BodyContact>,
    ) {
        let still = Kinematics::default();
        let before = |id: BodyId| self.before.get(id.0 as usize).copied().unwrap_or(still);
        // A collider without a body does not move; a body that was not in
        // the step before, or was placed since, keeps its velocities.
        let moved = |id: Option<BodyId>| match id {
            None => Some(still),
            Some(id) => self.moved.get(id.0 as usize).copied().flatten(),
        };
        let impact_speed_m_s = self.settings.impact_speed_m_s;
        solver_contacts(&self.physics, &self.units, &before, wanted, &mut |mut c| {
            if c.approach_speed_m_s > impact_speed_m_s {
                if let (Some(this), Some(other)) = (moved(Some(c.body)), moved(c.other)) {
                    let closing_m_s = (other.velocity_at(&c.point_m)
                        - this.velocity_at(&c.point_m))
                    .dot(&c.normal);
                    if closing_m_s <= impact_speed_m_s {
                        c.approach_speed_m_s = closing_m_s;
                    }
                }
            }
            out.push(c)
        });
    }
}

/// Calls `found` with every contact of the last step of `physics` on the
/// bodies for which `wanted` holds, in the narrow phase's (deterministic)
/// order; `before` gives a body's kinematics before the step.
pub(super) fn solver_contacts(
    physics: &PhysicsWorld,
    units: &Units,
    before: &dyn Fn(BodyId) -> Kinematics,
    wanted: &dyn Fn(BodyId) -> bool,
    found: &mut dyn FnMut(BodyContact),
) {
    let bodies = &physics.bodies;
    let kinematics = |id: Option<BodyId>| id.map(before).unwrap_or_default();
    for pair in physics.narrow_phase.contact_pairs() {
        for manifold in pair.solver_manifolds() {
            let data = &manifold.data;
            let ids = [
                body_id(bodies, data.rigid_body1),
                body_id(bodies, data.rigid_body2),
            ];
            let want = [ids[0].is_some_and(wanted), ids[1].is_some_and(wanted)];
            if !want[0] && !want[1] {
                continue;
            }
            // rapier's normal points out of the first body.
            let n = vector(data.normal);
            for contact in &data.solver_contacts {
                let index = contact.contact_indices()[0] as usize;
                let Some(point) = manifold.points.get(index) else {
                    continue;
                };
                let impulse_n_s = units.impulse_to_si(point.data.impulse);
                if impulse_n_s <= 0.0 {
                    continue;
                }
                let (p1, p2) = data.solver_contact_world_points(contact, bodies);
                let points = [units.point_to_si(p1), units.point_to_si(p2)];
                for side in 0..2 {
                    if !want[side] {
                        continue;
                    }
                    let (this, other) = (ids[side], ids[1 - side]);
                    let normal = if side == 0 { -n } else { n };
                    let p = points[side];
                    let relative =
                        kinematics(other).velocity_at(&p) - kinematics(this).velocity_at(&p);
                    found(BodyContact {
                        body: this.expect("wanted bodies exist"),
                        other,
                        point_m: p,
                        normal,
                        impulse_n_s,
                        approach_speed_m_s: relative.dot(&normal),
                    });
                }
            }
        }
    }
}

/// Whether two colliders touch: a contact point of their manifolds within
/// this distance (simulation units). Not the solver contacts: a sleeping
/// island keeps its manifolds but solves nothing, and a pile at rest must
/// still be one connected graph.
const TOUCH_DISTANCE: f32 = 1e-3;

pub(super) fn touching(pair: &rapier3d::geometry::ContactPair) -> bool {
    pair.manifolds()
        .iter()
        .any(|m| m.points.iter().any(|p| p.dist <= TOUCH_DISTANCE))
}
