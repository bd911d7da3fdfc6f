//! The global world's speculative contacts: which pairs of bodies get a
//! contact before they touch.
//!
//! Rapier gives every pair closer than its prediction distance a contact,
//! whatever the pair's motion. The default distance, 0.02 units, is 2 mm at
//! `z_fact` 0.1. In a pile whose bodies are closer than that (`cube-push`
//! leaves 0.5 mm between its cubes), each body then has contacts with all of
//! its up to 26 neighbours, about 36 solver contacts per cube. The whole pile
//! is also one island, so no part of it ever sleeps while the hand pushes
//! another part.
//!
//! Here the margin follows the motion instead (rapier's soft CCD). A pair's
//! margin is how far the two bodies close in over one step at their
//! velocities. Each body contributes at most rapier's default distance, so
//! a fast body keeps at least the margin it has by default. A pair at
//! rest gets [`resting_margin`]: enough to keep touching bodies' contacts
//! from dropping out and coming back step after step (with no margin at
//! all, a settled pile keeps waking up). Bodies at rest with a gap between
//! them get no contact, and each stack of a pile can sleep apart from the
//! others.
//!
//! The sub-world keeps rapier's fixed margin: it holds a few bodies, so the
//! extra contacts cost little there.

use rapier3d::dynamics::{IntegrationParameters, RigidBodyBuilder};

/// The most one body's motion over a step adds to the margin of its pairs
/// (simulation units): rapier's default prediction distance.
fn moving_margin() -> f32 {
    IntegrationParameters::default().prediction_distance()
}

/// The margin of a pair at rest (simulation units). It has to be above the
/// solver's residual at rest. It also has to be below the gaps a scene
/// leaves between bodies placed side by side. The `cube-push` pile gives
/// the same figures with 1/200 to 1/10 of rapier's margin
/// (benches/README.md); with none, its contacts flicker.
fn resting_margin() -> f32 {
    moving_margin() / 20.0
}

/// Sets the global world's base margin, the one pairs at rest get.
pub(super) fn configure(parameters: &mut IntegrationParameters) {
    parameters.normalized_prediction_distance = resting_margin() / parameters.length_unit;
}

/// A dynamic body whose motion widens the margin of its pairs.
pub(super) fn dynamic_body() -> RigidBodyBuilder {
    RigidBodyBuilder::dynamic().soft_ccd_prediction(moving_margin())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rapier3d::geometry::{ColliderBuilder, ColliderHandle};
    use rapier3d::math::Vector;
    use rapier3d::pipeline::PhysicsWorld;

    /// Half a cube of `cube-push` (simulation units at `z_fact` 0.1).
    const HALF: f32 = 0.25;

    fn world(ours: bool) -> PhysicsWorld {
        let mut physics = PhysicsWorld::new();
        physics.gravity = Vector::new(0.0, 0.0, -98.1);
        physics.integration_parameters.dt = 0.01;
        if ours {
            configure(&mut physics.integration_parameters);
        }
        physics.insert(
            RigidBodyBuilder::fixed().translation(Vector::new(0.0, 0.0, -1.0)),
            ColliderBuilder::cuboid(20.0, 20.0, 1.0),
        );
        physics
    }

    fn cube(physics: &mut PhysicsWorld, ours: bool, x: f32, vx: f32) -> ColliderHandle {
        let body = if ours {
            dynamic_body()
        } else {
            RigidBodyBuilder::dynamic()
        };
        let body = body
            .translation(Vector::new(x, 0.0, HALF))
            .linvel(Vector::new(vx, 0.0, 0.0));
        physics
            .insert(
                body,
                ColliderBuilder::cuboid(HALF, HALF, HALF).friction(0.0),
            )
            .1
    }

    fn solver_contacts(physics: &PhysicsWorld, a: ColliderHandle, b: ColliderHandle) -> usize {
        physics.narrow_phase.contact_pair(a, b).map_or(0, |pair| {
            pair.solver_manifolds()
                .iter()
                .map(|m| m.data.solver_contacts.len())
                .sum()
        })
    }

    #[test]
    fn resting_neighbours_a_small_gap_apart_get_no_contact_and_sleep() {
        // Two cubes 0.5 mm apart (`cube-push`'s gap), resting on the ground.
        let gap = 0.005;
        for ours in [false, true] {
            let mut physics = world(ours);
            let a = cube(&mut physics, ours, 0.0, 0.0);
            let b = cube(&mut physics, ours, 2.0 * HALF + gap, 0.0);
            for _ in 0..300 {
                physics.step();
            }
            let contacts = solver_contacts(&physics, a, b);
            let asleep = [a, b].iter().all(|&c| {
                let parent = physics.colliders[c].parent().unwrap();
                physics.bodies[parent].is_sleeping()
            });
            if ours {
                assert_eq!(contacts, 0, "a pair at rest across a gap has no contact");
                assert!(asleep, "resting cubes sleep");
            } else {
                // Rapier's fixed margin (2 mm here) bridges the gap.
                assert!(contacts > 0);
            }
        }
    }

    /// The deepest overlap of a cube sliding at `speed` (units/s) from
    /// `start` into a cube at rest, over 60 steps.
    fn deepest_overlap(ours: bool, start: f32, speed: f32) -> f32 {
        let mut physics = world(ours);
        let mover = cube(&mut physics, ours, start, speed);
        let target = cube(&mut physics, ours, 2.0 * HALF + 0.1, 0.0);
        let mut deepest = 0.0_f32;
        for _ in 0..60 {
            physics.step();
            let a = physics.colliders[mover].position().translation.x;
            let b = physics.colliders[target].position().translation.x;
            deepest = deepest.max(2.0 * HALF - (b - a));
        }
        deepest
    }

    #[test]
    fn a_fast_body_overlaps_no_more_than_with_the_fixed_margin() {
        // 2 cm per step (2 m/s), more than either margin: both can let it
        // overlap, depending on where its steps fall. The motion margin
        // must not make that worse; the rest margin alone would.
        let speed = 20.0;
        let slop = IntegrationParameters::default().allowed_linear_error();
        for start in [-0.5, -0.47, -0.43, -0.41] {
            let ours = deepest_overlap(true, start, speed);
            let fixed = deepest_overlap(false, start, speed);
            assert!(
                ours <= fixed + slop,
                "start {start}: {ours} against {fixed}"
            );
        }
    }
}
