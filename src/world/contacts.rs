//! Contact impulses of the last step, read from rapier's solver contacts and
//! grouped per breakable body.

use super::shapes::vertices;
use super::units::{vector, Units};
use super::{BodyId, World};
use crate::fracture::HertzContact;
use nalgebra::{Isometry3, Matrix3, Point3, Translation3, UnitQuaternion, Vector3};
use rapier3d::dynamics::{RigidBodyHandle, RigidBodySet};
use rapier3d::pipeline::PhysicsWorld;

/// A vertex of a body's shape this close to a solver contact of the same
/// pair is that contact (m): the solver puts a face contact's points at
/// the vertices, moved by the penetration.
const SOLVER_VERTEX_M: f64 = 1e-3;

/// Most corners [`World::add_closing_corners`] adds to one pair, spread
/// over the contact by [`spread_closing_corners`]: a bound on the impact's
/// contacts (each one a load of the impact's static correction) for a
/// rounded hull landing flat, whose rim has many vertices.
const MAX_CLOSING_CORNERS: usize = 8;

/// Moves to the front of `corners` at most `max` of them spread over the
/// contact, and returns how many: repeatedly the one farthest from those
/// kept and from the solver's contact points `solver` (farthest-point
/// sampling), ties to the first to close (least gap over approach speed).
/// All of them close while the strike presses; a plate landing flat has
/// its whole rim at the same gap, and keeping the first few in the hull's
/// order would put the load on one side of the plate.
fn spread_closing_corners(
    corners: &mut [BodyContact],
    solver: &[Point3<f64>],
    max: usize,
) -> usize {
    let closing_order = |a: &BodyContact, b: &BodyContact| {
        (a.gap_m / a.approach_speed_m_s).total_cmp(&(b.gap_m / b.approach_speed_m_s))
    };
    corners.sort_by(closing_order);
    let kept = corners.len().min(max);
    for k in 0..kept {
        let (done, rest) = corners.split_at(k);
        let nearest_m = |p: &Point3<f64>| {
            solver
                .iter()
                .chain(done.iter().map(|c| &c.point_m))
                .map(|q| (p - q).norm())
                .fold(f64::INFINITY, f64::min)
        };
        // The first maximum: `rest` is in closing order.
        let mut best = (0, f64::NEG_INFINITY);
        for (i, c) in rest.iter().enumerate() {
            let d_m = nearest_m(&c.point_m);
            if d_m > best.1 {
                best = (i, d_m);
            }
        }
        corners[k..=k + best.0].rotate_right(1);
    }
    kept
}

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
    /// How far apart the two were here before the step, beyond the
    /// closest point of the pair (m): 0 for the solver's contacts and for
    /// corners level with them; more for a corner an impact closes during
    /// its contact (`World::add_closing_corners`).
    pub gap_m: f64,
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

impl World {
    /// Appends to `contacts` (the step's, from [`Self::gather_contacts`],
    /// and the haptic sub-world's on its members) the corners of struck
    /// bodies that close during their impact, as
    /// contacts with a gap and no solver impulse. For each body and other
    /// body of a striking contact, these are the vertices of the body's
    /// shape, other than the solver's contacts, that approach the other
    /// body fast enough for an impact and, at that speed, close their gap
    /// to it (beyond the pair's closest distance) within Hertz's duration
    /// of the strike (the pair's fastest contact) against a rigid
    /// half-space (`HertzContact::rigid_duration_s`; the corner then
    /// touches while the strike still presses). That duration is at the
    /// two bodies' effective mass at the strike's point along its normal
    /// ([`inverse_mass_along`]): a tile landing on one corner presses it
    /// with a seventh of its mass, the rest turning it about that corner.
    /// Poses are those before the step, when the solver's contacts were
    /// found.
    ///
    /// Rapier gives a body landing nearly flat one contact, its lowest
    /// corner, until the others are inside the other body; a check of that
    /// corner alone sets the body spinning, and its far corners strike
    /// harder a few steps later, where a real tile lands on its face in
    /// one impact.
    pub(super) fn add_closing_corners(&self, contacts: &mut Vec<BodyContact>) {
        let impact_speed_m_s = self.settings.impact_speed_m_s;
        // Per pair, its fastest striking contact: the strike.
        let mut strikes: Vec<(BodyId, BodyId, BodyContact)> = Vec::new();
        for c in contacts.iter() {
            let Some(other) = c.other else { continue };
            if c.approach_speed_m_s <= impact_speed_m_s {
                continue;
            }
            match strikes
                .iter_mut()
                .find(|(b, o, _)| *b == c.body && *o == other)
            {
                Some(pair) if pair.2.approach_speed_m_s < c.approach_speed_m_s => pair.2 = *c,
                Some(_) => {}
                None => strikes.push((c.body, other, *c)),
            }
        }
        let mut added = Vec::new();
        for (body, other, strike) in strikes {
            let solver: Vec<Point3<f64>> = contacts
                .iter()
                .filter(|c| c.body == body && c.other == Some(other))
                .map(|c| c.point_m)
                .collect();
            let first = added.len();
            self.closing_corners(body, other, &strike, &solver, &mut added);
            let kept = spread_closing_corners(&mut added[first..], &solver, MAX_CLOSING_CORNERS);
            added.truncate(first + kept);
        }
        contacts.extend(added);
    }

    /// The corners of `body` that close on `other` during `strike` (see
    /// [`Self::add_closing_corners`]), appended to `out`; `solver` holds
    /// the pair's solver contact points.
    fn closing_corners(
        &self,
        body: BodyId,
        other: BodyId,
        strike: &BodyContact,
        solver: &[Point3<f64>],
        out: &mut Vec<BodyContact>,
    ) {
        let (Some(struck), Some(impactor)) = (self.body(body), self.body(other)) else {
            return;
        };
        let (units, impact_speed_m_s) = (self.units, self.settings.impact_speed_m_s);
        let still = Kinematics::default();
        let before = |id: BodyId| self.before.get(id.0 as usize).copied().unwrap_or(still);
        let (struck_before, impactor_before) = (before(body), before(other));
        let bodies = &self.physics.bodies;
        let inverse_kg = inverse_mass_along(
            &bodies[struck.handle],
            &units,
            &struck_before.com_m,
            &strike.point_m,
            &strike.normal,
        ) + inverse_mass_along(
            &bodies[impactor.handle],
            &units,
            &impactor_before.com_m,
            &strike.point_m,
            &strike.normal,
        );
        let hertz = self.impactor(body, Some(other));
        let window_s = HertzContact::sphere(
            1.0 / inverse_kg,
            hertz.radius_m,
            hertz.effective_modulus(&struck.material),
            strike.approach_speed_m_s,
        )
        .rigid_duration_s();
        if !window_s.is_finite() {
            return;
        }
        // The colliders of a body at their poses before the step: the
        // step's rigid motion undone.
        let colliders_before = |id: BodyId, handle: RigidBodyHandle| {
            let undo = self
                .step_motion(id)
                .map(|m| units.pose_to_sim(&m.inverse()));
            self.physics.bodies[handle]
                .colliders()
                .iter()
                .filter_map(|&h| self.physics.colliders.get(h))
                .map(|c| {
                    let now = *c.position();
                    (c, now, undo.map_or(now, |u| u * now))
                })
                .collect::<Vec<_>>()
        };
        let own = colliders_before(body, struck.handle);
        let others = colliders_before(other, impactor.handle);
        let closest = own
            .iter()
            .flat_map(|(a, _, a_pose)| {
                others.iter().filter_map(move |(b, _, b_pose)| {
                    rapier3d::parry::query::distance(a_pose, a.shape(), b_pose, b.shape())
                        .ok()
                        .map(|d| d.distance)
                })
            })
            .fold(f32::INFINITY, f32::min);
        if !closest.is_finite() {
            return;
        }
        for (collider, now, pose) in &own {
            for vertex in vertices(collider.shared_shape()) {
                let at_now = units.point_to_si(now.transform_point(vertex));
                if solver
                    .iter()
                    .any(|p| (p - at_now).norm() <= SOLVER_VERTEX_M)
                {
                    continue;
                }
                let at = pose.transform_point(vertex);
                let Some((distance, towards)) = others
                    .iter()
                    .map(|(b, _, b_pose)| {
                        let projection = b.shape().project_point(b_pose, at, true);
                        (projection.is_inside, at - projection.point)
                    })
                    .filter(|(inside, _)| !inside)
                    .map(|(_, d)| (d.length(), d))
                    .min_by(|a, b| a.0.total_cmp(&b.0))
                else {
                    continue;
                };
                if distance <= 0.0 {
                    continue;
                }
                let normal = vector(towards / distance);
                let point_m = units.point_to_si(at);
                let approach_m_s = (impactor_before.velocity_at(&point_m)
                    - struck_before.velocity_at(&point_m))
                .dot(&normal);
                let gap_m = units.length_to_si(distance - closest).max(0.0);
                if approach_m_s > impact_speed_m_s && gap_m <= approach_m_s * window_s {
                    out.push(BodyContact {
                        body,
                        other: Some(other),
                        point_m: at_now,
                        normal,
                        impulse_n_s: 0.0,
                        approach_speed_m_s: approach_m_s,
                        gap_m,
                    });
                }
            }
        }
    }

    /// The rigid motion of body `id` over the last step (SI, world axes):
    /// its pose now times the inverse of its pose before; `None` if it was
    /// not in the step.
    fn step_motion(&self, id: BodyId) -> Option<Isometry3<f64>> {
        let placed = (*self.placements.get(id.0 as usize)?)?;
        let now = self.pose(id)?;
        let body = self.body(id)?;
        let com_now = Kinematics::of(&self.physics.bodies[body.handle], &self.units).com_m;
        let local_com = now.inverse() * com_now;
        let before = Isometry3::from_parts(
            Translation3::from(placed.com_m - placed.rotation * local_com.coords),
            placed.rotation,
        );
        Some(now * before.inverse())
    }
}

/// The inverse of a rigid body's effective mass for an impulse along the
/// unit `direction` at `point_m`, the body's centre of mass at `com_m`
/// (1/kg): `1/m + (r × d)·I⁻¹(r × d)`, `r` from the centre of mass to the
/// point (the impulse's speed change at the point per N·s); 0 for a body
/// that impulses do not move.
pub(super) fn inverse_mass_along(
    rb: &rapier3d::dynamics::RigidBody,
    units: &Units,
    com_m: &Point3<f64>,
    point_m: &Point3<f64>,
    direction: &Vector3<f64>,
) -> f64 {
    if !rb.is_dynamic() {
        return 0.0;
    }
    let rd = (point_m - com_m).cross(direction);
    1.0 / f64::from(rb.mass()) + rd.dot(&(world_inv_inertia(rb, units) * rd))
}

/// A body's inverse inertia tensor in world axes (1/(kg·m²)).
pub(super) fn world_inv_inertia(rb: &rapier3d::dynamics::RigidBody, units: &Units) -> Matrix3<f64> {
    units.inverse_inertia_to_si(&rb.mass_properties().effective_world_inv_inertia)
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
                        gap_m: 0.0,
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

#[cfg(test)]
mod tests {
    use super::*;
    use rapier3d::dynamics::{MassProperties, RigidBodyBuilder};
    use rapier3d::geometry::ColliderSet;
    use rapier3d::glamx::Vec3;

    #[test]
    fn a_plate_struck_at_a_corner_moves_as_a_seventh_of_its_mass() {
        // A square plate of side a and thickness t, in units of 1 cm:
        // I_x = I_y = m(a² + t²)/12 and r × n = (a/2, −a/2, 0) at a
        // bottom corner, so 1/m_eff = (1 + 6a²/(a² + t²))/m.
        let units = Units { z_fact: 0.01 };
        let (a_m, t_m) = (0.15, 0.006);
        let half = Vec3::new(
            units.length_to_sim(a_m / 2.0),
            units.length_to_sim(a_m / 2.0),
            units.length_to_sim(t_m / 2.0),
        );
        let mut rb = RigidBodyBuilder::dynamic()
            .additional_mass_properties(MassProperties::from_cuboid(2.3, half))
            .build();
        rb.recompute_mass_properties_from_colliders(&ColliderSet::new());
        let mass_kg = f64::from(rb.mass());
        let com_m = Point3::origin();
        let corner_m = Point3::new(a_m / 2.0, a_m / 2.0, -t_m / 2.0);
        let up = Vector3::z();
        let expected = (1.0 + 6.0 * a_m * a_m / (a_m * a_m + t_m * t_m)) / mass_kg;
        let at_corner = inverse_mass_along(&rb, &units, &com_m, &corner_m, &up);
        assert!(
            (at_corner / expected - 1.0).abs() < 1e-5,
            "{at_corner} against {expected} 1/kg"
        );
        // At the centre, along the normal, the whole mass.
        let at_centre = inverse_mass_along(&rb, &units, &com_m, &com_m, &up);
        assert!((at_centre * mass_kg - 1.0).abs() < 1e-6);
        // A body that impulses do not move.
        let fixed = RigidBodyBuilder::fixed().build();
        assert_eq!(
            inverse_mass_along(&fixed, &units, &com_m, &corner_m, &up),
            0.0
        );
    }

    #[test]
    fn the_corners_kept_of_a_flat_landing_span_the_rim() {
        // A 32-gon rim of radius 0.1 m, all at the same gap, listed in
        // the hull's order; the solver touches one rim vertex.
        let rim = |i: usize| {
            let a = i as f64 * std::f64::consts::TAU / 32.0;
            Point3::new(0.1 * a.cos(), 0.1 * a.sin(), 0.0)
        };
        let corner = |i: usize, gap_m: f64| BodyContact {
            body: BodyId(0),
            other: Some(BodyId(1)),
            point_m: rim(i),
            normal: Vector3::z(),
            impulse_n_s: 0.0,
            approach_speed_m_s: 1.0,
            gap_m,
        };
        let solver = [rim(0)];
        let mut corners: Vec<_> = (1..32).map(|i| corner(i, 1e-9)).collect();
        let kept = spread_closing_corners(&mut corners, &solver, 4);
        assert_eq!(kept, 4);
        // Farthest from the solver's vertex first: the opposite one.
        assert_eq!(corners[0].point_m, rim(16));
        // With the solver's, the four kept and it cover every side: no
        // rim vertex is farther than a 45° chord from one of them.
        let chosen: Vec<_> = solver
            .iter()
            .copied()
            .chain(corners[..kept].iter().map(|c| c.point_m))
            .collect();
        let chord_m = 2.0 * 0.1 * (std::f64::consts::PI / 8.0).sin();
        for i in 0..32 {
            let nearest_m = chosen
                .iter()
                .map(|q| (rim(i) - q).norm())
                .fold(f64::INFINITY, f64::min);
            assert!(nearest_m <= chord_m + 1e-12, "vertex {i} at {nearest_m} m");
        }
        // Among equally far candidates, the first to close.
        let at = |y_m: f64, gap_m: f64| BodyContact {
            point_m: Point3::new(0.0, y_m, 0.0),
            ..corner(0, gap_m)
        };
        let mut pair = vec![at(0.1, 2e-9), at(-0.1, 1e-9)];
        spread_closing_corners(&mut pair, &[Point3::new(0.1, 0.0, 0.0)], 1);
        assert_eq!(pair[0].point_m.y, -0.1);
        // Fewer candidates than allowed: all kept.
        assert_eq!(spread_closing_corners(&mut pair, &solver, 8), 2);
    }
}
