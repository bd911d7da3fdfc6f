//! The drop experiment of a scene (`[drop]`): one body released from a
//! height above another, run headless until it has had time to land and
//! settle.

use super::{
    write_obj_frame, BodyId, Counters, ImpactCheck, SceneAssets, StepInputs, World, WorldError,
};
use crate::config::{ConfigError, Scene};
use crate::fracture::Pattern;
use nalgebra::{Isometry3, Translation3, Vector3};
use serde::Serialize;
use std::path::Path;

/// One drop.
#[derive(Debug, Clone, Serialize)]
pub struct DropRun {
    /// Release height above the target's top (m).
    pub height_m: f64,
    /// Whether the tested body split: the target, or the dropped body
    /// when only it is breakable (a tile dropped on the floor).
    pub broke: bool,
    /// Simulated time of the first split of the tested body (s).
    pub break_time_s: Option<f64>,
    /// Live pieces of the tested body at the end (1 if it did not split).
    pub fragments: usize,
    /// Crack area (m²).
    pub crack_area_m2: f64,
    /// Largest total normal impulse between the two bodies (the tested
    /// one and its pieces) in one step (N·s): an impact's computed
    /// exchange, the solver's at rest.
    pub peak_contact_impulse_n_s: f64,
    /// The first impact check on the tested body: the landing, with the
    /// contact the fracture engine computed for it.
    pub first_impact: Option<ImpactCheck>,
    /// Fracture checks that cracked something.
    pub fracture_events: usize,
    /// World steps run.
    pub steps: u64,
    /// Simulated time (s).
    pub simulated_s: f64,
    /// The fracture pattern (Glondu §5.1) of the tested body's first split:
    /// the landing's cracks, before any piece breaks again.
    pub pattern: Option<Pattern>,
}

/// Frames to write during a drop: one OBJ every `every_steps` steps.
pub struct FrameOutput<'a> {
    /// Where the frames go.
    pub dir: &'a Path,
    /// One frame every this many steps.
    pub every_steps: u64,
}

/// Drops the scene's `[drop] body` from `height_m` metres above the top of
/// its `target` (lowest point of the body to highest point of the target,
/// straight above the target's centre of mass) and runs for the free-fall
/// time plus `settle_s`, and reports what happened to the target, or to
/// the dropped body when only it is breakable. Fracture checks run on
/// `threads`; step times go to `counters`.
pub fn drop_run(
    scene: &Scene,
    assets: &SceneAssets,
    height_m: f64,
    seed: u64,
    frames: Option<&FrameOutput>,
    threads: &rayon::ThreadPool,
    counters: &mut Counters,
) -> Result<DropRun, WorldError> {
    let spec = scene.drop.as_ref().ok_or_else(|| ConfigError::Invalid {
        path: scene.path.clone(),
        entry: "drop".into(),
        field: "drop",
        message: "the scene has no [drop] table".into(),
    })?;
    if !(height_m.is_finite() && height_m >= 0.0) {
        return Err(ConfigError::Invalid {
            path: scene.path.clone(),
            entry: "drop".into(),
            field: "height",
            message: format!("{height_m} m must be ≥ 0"),
        }
        .into());
    }
    let mut world = World::from_scene(scene, assets, seed, threads)?;
    world.record_split_patterns(true);
    let body = world
        .find(&spec.body)
        .expect("validated: the drop body exists");
    let target = world
        .find(&spec.target)
        .expect("validated: the drop target exists");
    place_above(&mut world, body, target, height_m);
    let breakable = |id: BodyId| world.body(id).is_some_and(|b| b.breakable.is_some());
    let (tested, other) = if breakable(target) || !breakable(body) {
        (target, body)
    } else {
        (body, target)
    };
    let gravity = Vector3::from(scene.world.gravity_m_s2).norm().max(1e-9);
    let duration_s = (2.0 * height_m / gravity).sqrt() + spec.settle_s;
    let steps =
        crate::limits::simulated_steps(duration_s, scene.world.time_step_s).map_err(|e| {
            ConfigError::Invalid {
                path: scene.path.clone(),
                entry: "drop".into(),
                field: "height",
                message: format!("{} m: {e}", crate::limits::readable(height_m)),
            }
        })?;
    let mut peak_impulse: f64 = 0.0;
    let mut first_impact = None;
    for step in 0..steps {
        if let Some(frames) = frames {
            if step % frames.every_steps.max(1) == 0 {
                let path = frames
                    .dir
                    .join(format!("frame_{:05}.obj", step / frames.every_steps.max(1)));
                write_obj_frame(&world, &path).map_err(|source| WorldError::Frames {
                    path: path.clone(),
                    source,
                })?;
            }
        }
        world.step(&StepInputs::default(), threads, counters);
        let exchanged_n_s: f64 = world
            .last_contacts()
            .iter()
            .filter(|c| world.descends_from(c.body, tested) && c.other == Some(other))
            .map(|c| c.impulse_n_s)
            .fold(0.0, |a, b| a + b);
        peak_impulse = peak_impulse.max(exchanged_n_s);
        if first_impact.is_none() {
            first_impact = world
                .last_impacts()
                .iter()
                .find(|i| world.descends_from(i.body, tested))
                .copied();
        }
    }
    let events: Vec<_> = world
        .events()
        .iter()
        .filter(|e| world.descends_from(e.body, tested))
        .collect();
    let first_split = events.iter().find(|e| !e.fragments.is_empty());
    let break_time_s = first_split.map(|e| e.time_s);
    let fragments = world
        .bodies()
        .filter(|(id, _)| world.descends_from(*id, tested))
        .count();
    Ok(DropRun {
        height_m,
        broke: break_time_s.is_some(),
        break_time_s,
        fragments,
        crack_area_m2: events
            .iter()
            .map(|e| e.crack_area_m2)
            .fold(0.0, |a, b| a + b),
        peak_contact_impulse_n_s: peak_impulse,
        first_impact,
        fracture_events: events.len(),
        steps,
        simulated_s: world.time_s(),
        pattern: first_split.and_then(|e| e.pattern.clone()),
    })
}

/// Moves `body` (at rest) so that its lowest surface point is `height_m`
/// above the highest surface point of `target`, above the target's centre.
pub fn place_above(world: &mut World, body: BodyId, target: BodyId, height_m: f64) {
    let extent_z = |world: &World, id: BodyId| {
        let (_, points, _) = world
            .world_surfaces()
            .find(|(i, _, _)| *i == id)
            .expect("live body");
        points
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                (lo.min(p.z), hi.max(p.z))
            })
    };
    let (_, target_top) = extent_z(world, target);
    let (body_bottom, _) = extent_z(world, body);
    let pose = world.pose(body).expect("live body");
    let target_com = world.motion(target).map(|m| m.com_m).unwrap_or([0.0; 3]);
    let z = pose.translation.z + (target_top + height_m - body_bottom);
    let placed = Isometry3::from_parts(
        Translation3::new(target_com[0], target_com[1], z),
        pose.rotation,
    );
    world.set_state(body, &placed, &Vector3::zeros(), &Vector3::zeros());
}
