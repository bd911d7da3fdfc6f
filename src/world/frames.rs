//! Frames for ParaView: every body's surface in world coordinates, one OBJ
//! file per frame.

use super::World;
use crate::mesh::{write_obj, MeshError};
use std::path::Path;

/// Writes all live bodies' surfaces, placed at their current poses, into one
/// OBJ file (metres).
pub fn write_obj_frame(world: &World, path: &Path) -> Result<(), MeshError> {
    let mut points = Vec::new();
    let mut triangles = Vec::new();
    for (_, body_points, body_triangles) in world.world_surfaces() {
        let offset = points.len() as u32;
        points.extend(body_points);
        triangles.extend(body_triangles.iter().map(|t| t.map(|v| v + offset)));
    }
    write_obj(path, &points, &triangles)
}
