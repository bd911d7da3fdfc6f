//! Collision shapes: the scene's primitives, and convex hulls (or compounds
//! of them) for tet-mesh bodies and fragments; the triangle surfaces the
//! frame writer draws.

use super::units::Units;
use crate::config::ShapeSpec;
use crate::fracture::Fragment;
use nalgebra::Point3;
use rapier3d::geometry::SharedShape;
use rapier3d::glamx::{Pose3, Vec3};

/// A closed triangle surface in a body's frame (metres).
#[derive(Debug, Clone, Default)]
pub struct Surface {
    /// Points (m).
    pub points: Vec<Point3<f64>>,
    /// Triangles of `points`, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
    /// Indices of the triangles on crack surfaces (a fragment's).
    pub crack_triangles: Vec<u32>,
}

/// A hull whose volume exceeds the fragment's by more than this factor is
/// replaced by a compound of hulls of parts of the surface.
const CONCAVE_HULL_RATIO: f64 = 1.2;

/// Most cells of the compound grid along one axis.
const MAX_CELLS_PER_AXIS: usize = 4;

/// A primitive shape of a scene body, in simulation units.
pub(super) fn primitive(shape: &ShapeSpec, units: &Units) -> Option<SharedShape> {
    let l = |m: f64| units.length_to_sim(m);
    match shape {
        ShapeSpec::Box { size_m } => Some(SharedShape::cuboid(
            l(size_m[0] / 2.0),
            l(size_m[1] / 2.0),
            l(size_m[2] / 2.0),
        )),
        ShapeSpec::Sphere { radius_m } => Some(SharedShape::ball(l(*radius_m))),
        ShapeSpec::Capsule { radius_m, length_m } => {
            Some(SharedShape::capsule_z(l(length_m / 2.0), l(*radius_m)))
        }
        ShapeSpec::Convex { points_m } => {
            let points: Vec<Vec3> = points_m
                .iter()
                .map(|p| Vec3::new(l(p[0]), l(p[1]), l(p[2])))
                .collect();
            SharedShape::convex_hull(&points)
        }
        ShapeSpec::TetMesh { .. } => None,
    }
}

/// The collision shape of a fragment (or of an intact tet-mesh body, its
/// single fragment): the convex hull of its surface, or, when that hull is
/// much larger than the fragment (a concave piece), a compound of the hulls
/// of its surface binned on a coarse grid over its bounding box. Cells span
/// the thin direction of a flat piece whole, so each holds both faces.
/// `None` if the surface is degenerate (flat or too few points).
pub(super) fn fragment_shape(fragment: &Fragment, units: &Units) -> Option<SharedShape> {
    let points: Vec<Vec3> = fragment
        .points
        .iter()
        .map(|p| units.point_to_sim(p))
        .collect();
    let hull = SharedShape::convex_hull(&points)?;
    let hull_volume_m3 = units.volume_to_si(f64::from(hull.mass_properties(1.0).mass()));
    if hull_volume_m3 <= CONCAVE_HULL_RATIO * fragment.volume_m3 {
        return Some(hull);
    }
    let (lo, hi) = bounds(&fragment.points);
    let extent = hi - lo;
    let cell = (extent.max() / MAX_CELLS_PER_AXIS as f64).max(extent.min());
    let cells = extent.map(|e| ((e / cell).ceil() as usize).clamp(1, MAX_CELLS_PER_AXIS));
    let mut bins: Vec<Vec<Vec3>> = vec![Vec::new(); cells.x * cells.y * cells.z];
    for tri in &fragment.triangles {
        let c = tri
            .iter()
            .map(|&v| fragment.points[v as usize].coords)
            .sum::<nalgebra::Vector3<f64>>()
            / 3.0;
        let index = |axis: usize| {
            let t = (c[axis] - lo[axis]) / extent[axis].max(f64::MIN_POSITIVE);
            ((t * cells[axis] as f64) as usize).min(cells[axis] - 1)
        };
        let bin = index(0) + cells.x * (index(1) + cells.y * index(2));
        bins[bin].extend(tri.iter().map(|&v| points[v as usize]));
    }
    let parts: Vec<(Pose3, SharedShape)> = bins
        .iter()
        .filter(|b| b.len() >= 4)
        .filter_map(|b| SharedShape::convex_hull(b))
        .map(|s| (Pose3::IDENTITY, s))
        .collect();
    if parts.len() < 2 {
        return Some(hull);
    }
    Some(SharedShape::compound(parts))
}

fn bounds(points: &[Point3<f64>]) -> (Point3<f64>, Point3<f64>) {
    points.iter().fold(
        (
            Point3::from([f64::INFINITY; 3]),
            Point3::from([f64::NEG_INFINITY; 3]),
        ),
        |(lo, hi), p| (lo.inf(p), hi.sup(p)),
    )
}

/// The drawable surface of a primitive shape (metres, body frame).
pub(super) fn primitive_surface(shape: &SharedShape, units: &Units) -> Surface {
    let (points, triangles) = if let Some(ball) = shape.as_ball() {
        ball.to_trimesh(12, 8)
    } else if let Some(cuboid) = shape.as_cuboid() {
        cuboid.to_trimesh()
    } else if let Some(capsule) = shape.as_capsule() {
        capsule.to_trimesh(12, 4)
    } else if let Some(hull) = shape.as_convex_polyhedron() {
        hull.to_trimesh()
    } else {
        (Vec::new(), Vec::new())
    };
    Surface {
        points: points.into_iter().map(|p| units.point_to_si(p)).collect(),
        triangles,
        crack_triangles: Vec::new(),
    }
}

/// The vertices of a polyhedral collision shape, in its frame (simulation
/// units): a hull's, a cuboid's corners, every part's of a compound. None
/// for a smooth shape (ball, capsule): its contact with a flat body is one
/// point, which the solver finds.
pub(super) fn vertices(shape: &SharedShape) -> Vec<Vec3> {
    if let Some(hull) = shape.as_convex_polyhedron() {
        hull.points().to_vec()
    } else if let Some(cuboid) = shape.as_cuboid() {
        cuboid.to_trimesh().0
    } else if let Some(compound) = shape.as_compound() {
        compound
            .shapes()
            .iter()
            .flat_map(|(pose, part)| {
                vertices(part)
                    .into_iter()
                    .map(|v| pose.transform_point(v))
                    .collect::<Vec<_>>()
            })
            .collect()
    } else {
        Vec::new()
    }
}

/// The radius of curvature a body presents in a contact, for Hertz's
/// contact duration: a sphere's or capsule's radius, otherwise half the
/// smallest extent of its bounding box (metres).
pub(super) fn contact_radius_m(shape: &SharedShape, units: &Units) -> f64 {
    if let Some(ball) = shape.as_ball() {
        return units.length_to_si(ball.radius);
    }
    if let Some(capsule) = shape.as_capsule() {
        return units.length_to_si(capsule.radius);
    }
    let aabb = shape.compute_local_aabb();
    let extent = aabb.maxs - aabb.mins;
    units.length_to_si(extent.min_element()) * 0.5
}
