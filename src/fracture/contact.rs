//! Where a contact force acts on a body's mesh: the nodes of the contact
//! patch and their share of the force.

use crate::mesh::{BoundaryFace, TetMesh};
use nalgebra::Point3;

/// Nodes and weights (summing to 1) of a contact force at `point` spread
/// over a Hertz patch of radius `radius_m`: pressure `∝ √(1 − r²/a²)`
/// (Johnson, Contact Mechanics §4.2), integrated on the boundary faces
/// whose centroid lies in the patch (one point per face, shared equally by
/// its nodes). A patch smaller than the faces around it acts at the nearest
/// point of the nearest face, with barycentric weights. Only faces of
/// `region`'s tets are used when it has any.
pub(super) fn contact_patch(
    mesh: &TetMesh,
    region: Option<&[bool]>,
    point: &Point3<f64>,
    radius_m: f64,
) -> Vec<(u32, f64)> {
    let faces = &mesh.topology().boundary_faces;
    let in_region = |f: &BoundaryFace| region.is_none_or(|r| r[f.tet as usize]);
    // A piece cut out of the interior has no original face: use them all.
    let any_in_region = faces.iter().any(in_region);
    let usable = |f: &&BoundaryFace| !any_in_region || in_region(f);
    let mut patch: Vec<(u32, f64)> = Vec::new();
    if radius_m > 0.0 {
        for face in faces.iter().filter(usable) {
            let [a, b, c] = face.nodes.map(|n| mesh.nodes()[n as usize]);
            let centroid = Point3::from((a.coords + b.coords + c.coords) / 3.0);
            let r2 = (centroid - point).norm_squared() / (radius_m * radius_m);
            if r2 < 1.0 {
                let weight = 0.5 * (b - a).cross(&(c - a)).norm() * (1.0 - r2).sqrt() / 3.0;
                patch.extend(face.nodes.map(|n| (n, weight)));
            }
        }
    }
    if patch.is_empty() {
        let (nodes, weights) = nearest_boundary_face(mesh, faces.iter().filter(usable), point);
        patch.extend(nodes.into_iter().zip(weights));
    }
    let total: f64 = patch.iter().map(|p| p.1).sum();
    if total > 0.0 {
        patch.iter_mut().for_each(|p| p.1 /= total);
    }
    patch
}

/// The face among `faces` nearest `point` and the barycentric weights of
/// the nearest point on it.
fn nearest_boundary_face<'a>(
    mesh: &TetMesh,
    faces: impl Iterator<Item = &'a BoundaryFace>,
    point: &Point3<f64>,
) -> ([u32; 3], [f64; 3]) {
    let mut best = ([0u32; 3], [1.0, 0.0, 0.0], f64::INFINITY);
    for face in faces {
        let [a, b, c] = face.nodes.map(|n| mesh.nodes()[n as usize]);
        // The distance to the face's bounding box is at most the distance
        // to the face: most faces are passed over on it alone.
        let outside = |i: usize| {
            let (low, high) = (a[i].min(b[i]).min(c[i]), a[i].max(b[i]).max(c[i]));
            (low - point[i]).max(point[i] - high).max(0.0)
        };
        if outside(0).powi(2) + outside(1).powi(2) + outside(2).powi(2) >= best.2 {
            continue;
        }
        let weights = closest_on_triangle(point, &a, &b, &c);
        let q = Point3::from(a.coords * weights[0] + b.coords * weights[1] + c.coords * weights[2]);
        let d = (q - point).norm_squared();
        if d < best.2 {
            best = (face.nodes, weights, d);
        }
    }
    (best.0, best.1)
}

/// Barycentric weights of the point of triangle abc nearest p (Ericson,
/// Real-Time Collision Detection §5.1.5).
fn closest_on_triangle(
    p: &Point3<f64>,
    a: &Point3<f64>,
    b: &Point3<f64>,
    c: &Point3<f64>,
) -> [f64; 3] {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return [1.0, 0.0, 0.0];
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return [0.0, 1.0, 0.0];
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return [1.0 - v, v, 0.0];
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return [0.0, 0.0, 1.0];
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return [1.0 - w, 0.0, w];
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return [0.0, 1.0 - w, w];
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    [1.0 - v - w, v, w]
}
