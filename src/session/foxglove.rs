//! The session log's 3D channels, in the Foxglove schemas that Foxglove,
//! Lichtblick and Rerun show in their 3D views: `/scene`
//! (`foxglove.SceneUpdate`: every body's surface as a triangle list in its
//! own frame, deleted when it breaks) and `/tf` (`foxglove.FrameTransforms`:
//! each body frame's pose in `world`). JSON-encoded with `{sec, nsec}`
//! times, as those tools expect; every field the published schemas require
//! is written.

use serde::Serialize;

pub(crate) const SCENE_TOPIC: &str = "/scene";
pub(crate) const TRANSFORMS_TOPIC: &str = "/tf";

/// The root frame of `/tf`.
pub const WORLD_FRAME: &str = "world";

/// A time as the Foxglove schemas write it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Time {
    /// Whole seconds.
    pub sec: u32,
    /// Nanoseconds, below 1e9.
    pub nsec: u32,
}

impl Time {
    /// `time_s` (clamped to 0..u32::MAX s) as seconds and nanoseconds.
    pub fn from_s(time_s: f64) -> Self {
        let ns = (time_s.clamp(0.0, f64::from(u32::MAX)) * 1e9).round() as u64;
        Self {
            sec: (ns / 1_000_000_000) as u32,
            nsec: (ns % 1_000_000_000) as u32,
        }
    }
}

/// `foxglove.SceneUpdate`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SceneUpdate {
    /// Entities removed (broken bodies).
    pub deletions: Vec<SceneEntityDeletion>,
    /// Entities added (bodies, fragments).
    pub entities: Vec<SceneEntity>,
}

/// `foxglove.SceneEntityDeletion` of one entity (`type` 0, MATCHING_ID).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SceneEntityDeletion {
    /// When.
    pub timestamp: Time,
    /// 0: the entity with `id`.
    #[serde(rename = "type")]
    pub kind: u8,
    /// The entity.
    pub id: String,
}

/// A `foxglove.KeyValuePair`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyValue {
    /// Key.
    pub key: String,
    /// Value.
    pub value: String,
}

/// `foxglove.SceneEntity` holding one triangle list; the other primitive
/// lists are written empty.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SceneEntity {
    /// When it appeared.
    pub timestamp: Time,
    /// The body's frame (`body/ID`), posed by `/tf`.
    pub frame_id: String,
    /// `body/ID`.
    pub id: String,
    /// Zero: until deleted.
    pub lifetime: Time,
    /// It moves with its frame.
    pub frame_locked: bool,
    /// `name`, `kind`, and `parent` for a fragment.
    pub metadata: Vec<KeyValue>,
    /// The body's surface.
    pub triangles: Vec<TriangleList>,
    /// Empty.
    pub arrows: [(); 0],
    /// Empty.
    pub cubes: [(); 0],
    /// Empty.
    pub spheres: [(); 0],
    /// Empty.
    pub cylinders: [(); 0],
    /// Empty.
    pub lines: [(); 0],
    /// Empty.
    pub texts: [(); 0],
    /// Empty.
    pub models: [(); 0],
}

/// `foxglove.TriangleListPrimitive`: `indices` into `points`, three per
/// triangle, one colour.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TriangleList {
    /// Identity: the points are in the entity's frame.
    pub pose: Pose,
    /// Vertices (m).
    pub points: Vec<Vector3>,
    /// The colour of every triangle.
    pub color: Color,
    /// Empty: one colour.
    pub colors: [(); 0],
    /// Three per triangle, counter-clockwise seen from outside.
    pub indices: Vec<u32>,
}

/// `foxglove.Pose`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pose {
    /// Translation (m).
    pub position: Vector3,
    /// Rotation.
    pub orientation: Quaternion,
}

impl Pose {
    /// No translation, no rotation.
    pub const IDENTITY: Pose = Pose {
        position: Vector3 {
            x: 0.0,
            y: 0.0,
            z: 0.0,
        },
        orientation: Quaternion {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 1.0,
        },
    };
}

/// `foxglove.Vector3` and `foxglove.Point3`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Vector3 {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
}

/// `foxglove.Quaternion`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Quaternion {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
    /// w.
    pub w: f64,
}

/// `foxglove.Color`, components in 0–1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Color {
    /// Red.
    pub r: f64,
    /// Green.
    pub g: f64,
    /// Blue.
    pub b: f64,
    /// Opacity.
    pub a: f64,
}

/// `foxglove.FrameTransforms`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FrameTransforms {
    /// One per live body.
    pub transforms: Vec<FrameTransform>,
}

/// `foxglove.FrameTransform`: a body frame's pose in `world`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameTransform {
    /// When.
    pub timestamp: Time,
    /// [`WORLD_FRAME`].
    pub parent_frame_id: String,
    /// `body/ID`.
    pub child_frame_id: String,
    /// Translation (m).
    pub translation: Vector3,
    /// Rotation.
    pub rotation: Quaternion,
}

/// What the simulation thread queues for the 3D channels.
#[derive(Debug, Clone, PartialEq)]
pub enum SceneLog {
    /// Bodies added or removed, on `/scene`.
    Update {
        /// Session time (s).
        time_s: f64,
        /// The update.
        update: SceneUpdate,
    },
    /// Body poses, on `/tf`.
    Transforms {
        /// Session time (s).
        time_s: f64,
        /// The poses.
        transforms: FrameTransforms,
    },
}

/// The entity and frame name of body `id`.
pub fn body_frame(id: u32) -> String {
    format!("body/{id}")
}

/// JSON schema of the `/scene` channel: the parts of `foxglove.SceneUpdate`
/// tessera writes (the published schema is the reference).
pub(crate) const SCENE_SCHEMA: &str = r#"{
  "title": "foxglove.SceneUpdate",
  "type": "object",
  "required": ["deletions", "entities"],
  "properties": {
    "deletions": {"type": "array", "items": {"type": "object",
      "required": ["timestamp", "type", "id"]}},
    "entities": {"type": "array", "items": {"type": "object",
      "required": ["timestamp", "frame_id", "id", "lifetime", "frame_locked",
        "metadata", "arrows", "cubes", "spheres", "cylinders", "lines",
        "triangles", "texts", "models"]}}
  }
}"#;

/// JSON schema of the `/tf` channel (`foxglove.FrameTransforms`).
pub(crate) const TRANSFORMS_SCHEMA: &str = r#"{
  "title": "foxglove.FrameTransforms",
  "type": "object",
  "required": ["transforms"],
  "properties": {
    "transforms": {"type": "array", "items": {"type": "object",
      "required": ["timestamp", "parent_frame_id", "child_frame_id",
        "translation", "rotation"]}}
  }
}"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_split_into_seconds_and_nanoseconds() {
        assert_eq!(
            Time::from_s(3.25),
            Time {
                sec: 3,
                nsec: 250_000_000
            }
        );
        assert_eq!(Time::from_s(-1.0), Time::default());
        let late = Time::from_s(1.999_999_999_9);
        assert_eq!(late, Time { sec: 2, nsec: 0 });
    }

    #[test]
    fn empty_primitive_lists_are_written_as_empty_arrays() {
        let entity = SceneEntity {
            timestamp: Time::default(),
            frame_id: body_frame(3),
            id: body_frame(3),
            lifetime: Time::default(),
            frame_locked: true,
            metadata: Vec::new(),
            triangles: Vec::new(),
            arrows: [],
            cubes: [],
            spheres: [],
            cylinders: [],
            lines: [],
            texts: [],
            models: [],
        };
        let json = serde_json::to_value(&entity).unwrap();
        assert_eq!(json["cubes"], serde_json::json!([]));
        assert_eq!(json["frame_id"], "body/3");
    }
}
