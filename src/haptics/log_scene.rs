//! The session log's 3D channels (`/scene`, `/tf`; `session::foxglove`)
//! as the simulation thread writes them: bodies added and removed at every
//! sync, so fragments appear at the break, and poses at a fixed rate of
//! session time, so the same session gives the same log.

use super::view::{poses, BodyDiff, BodyView};
use crate::session::foxglove::{self, SceneLog};
use crate::session::RecorderHandle;
use crate::world::World;

/// Session ticks between two `/tf` messages of the log (30 per second).
const TRANSFORMS_EVERY_TICKS: u64 = 33;

/// The simulation thread's side of the session log's 3D channels: bodies
/// added and removed at every sync (fragments appear at the break), poses
/// every [`TRANSFORMS_EVERY_TICKS`] of session time and with every change,
/// so the log is the same for the same session.
pub(super) struct LogScene {
    recorder: RecorderHandle,
    bodies: BodyDiff,
    last_transforms_tick: Option<u64>,
}

impl LogScene {
    pub(super) fn new(recorder: RecorderHandle) -> Self {
        Self {
            recorder,
            bodies: BodyDiff::default(),
            last_transforms_tick: None,
        }
    }

    /// After a global step at `tick`.
    pub(super) fn record(&mut self, world: &World, time_s: f64, tick: u64) {
        let (mut added, mut removed) = (Vec::new(), Vec::new());
        self.bodies.update(world, &mut added, &mut removed);
        let changed = !added.is_empty() || !removed.is_empty();
        let stamp = foxglove::Time::from_s(time_s);
        if changed {
            let update = foxglove::SceneUpdate {
                deletions: removed
                    .iter()
                    .map(|&id| foxglove::SceneEntityDeletion {
                        timestamp: stamp,
                        kind: 0,
                        id: foxglove::body_frame(id),
                    })
                    .collect(),
                entities: added.iter().map(|b| scene_entity(b, stamp)).collect(),
            };
            self.recorder.scene(SceneLog::Update { time_s, update });
        }
        let due = self
            .last_transforms_tick
            .is_none_or(|last| tick >= last + TRANSFORMS_EVERY_TICKS);
        if changed || due {
            let transforms = foxglove::FrameTransforms {
                transforms: poses(world)
                    .iter()
                    .map(|p| foxglove::FrameTransform {
                        timestamp: stamp,
                        parent_frame_id: foxglove::WORLD_FRAME.into(),
                        child_frame_id: foxglove::body_frame(p.id),
                        translation: vector(p.position_m),
                        rotation: foxglove::Quaternion {
                            w: p.orientation_wxyz[0],
                            x: p.orientation_wxyz[1],
                            y: p.orientation_wxyz[2],
                            z: p.orientation_wxyz[3],
                        },
                    })
                    .collect(),
            };
            self.recorder
                .scene(SceneLog::Transforms { time_s, transforms });
            self.last_transforms_tick = Some(tick);
        }
    }
}

fn vector(v: [f64; 3]) -> foxglove::Vector3 {
    foxglove::Vector3 {
        x: v[0],
        y: v[1],
        z: v[2],
    }
}

/// A body's entity: its surface in its frame, coloured by kind (fragments
/// by id, so neighbouring pieces differ).
fn scene_entity(body: &BodyView, stamp: foxglove::Time) -> foxglove::SceneEntity {
    const FRAGMENT_COLOURS: [[f64; 3]; 6] = [
        [0.91, 0.76, 0.55],
        [0.62, 0.78, 0.88],
        [0.80, 0.62, 0.82],
        [0.66, 0.84, 0.62],
        [0.93, 0.62, 0.58],
        [0.93, 0.88, 0.60],
    ];
    let rgb = match (body.kind, body.parent) {
        (_, Some(_)) => FRAGMENT_COLOURS[body.id as usize % FRAGMENT_COLOURS.len()],
        ("breakable", None) => [0.94, 0.92, 0.86],
        ("dynamic", None) => [0.45, 0.50, 0.58],
        _ => [0.55, 0.55, 0.55],
    };
    let mut metadata = vec![
        foxglove::KeyValue {
            key: "name".into(),
            value: body.name.clone(),
        },
        foxglove::KeyValue {
            key: "kind".into(),
            value: body.kind.into(),
        },
    ];
    if let Some(parent) = body.parent {
        metadata.push(foxglove::KeyValue {
            key: "parent".into(),
            value: foxglove::body_frame(parent),
        });
    }
    foxglove::SceneEntity {
        timestamp: stamp,
        frame_id: foxglove::body_frame(body.id),
        id: foxglove::body_frame(body.id),
        lifetime: foxglove::Time::default(),
        frame_locked: true,
        metadata,
        triangles: vec![foxglove::TriangleList {
            pose: foxglove::Pose::IDENTITY,
            points: body
                .points_m
                .iter()
                .map(|p| vector(p.map(f64::from)))
                .collect(),
            color: foxglove::Color {
                r: rgb[0],
                g: rgb[1],
                b: rgb[2],
                a: 1.0,
            },
            colors: [],
            indices: body.triangles.iter().flatten().copied().collect(),
        }],
        arrows: [],
        cubes: [],
        spheres: [],
        cylinders: [],
        lines: [],
        texts: [],
        models: [],
    }
}
