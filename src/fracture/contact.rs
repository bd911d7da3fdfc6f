//! Where a contact force acts on a body's mesh: the nodes of the contact
//! patch and their share of the force.

use crate::fem::{ElasticMesh, ElementOrder};
use crate::mesh::{BoundaryFace, TetMesh, TET_EDGES};
use nalgebra::{Matrix3, Point3, Vector3};

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
    let usable = usable_faces(faces, region);
    let usable = |f: &&BoundaryFace| usable(f);
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

/// The boundary faces (index in the mesh's boundary faces, weight) over
/// which each of `corners` carries its share of a face-to-face contact,
/// one list per corner, its weights the faces' areas summing to 1, empty
/// when no face lies nearest that corner.
///
/// A flat body pressed on a face touches over the polygon its contact
/// points span (the corners of the solver's manifold, on the contact plane
/// through them), not at the corners, and a uniform pressure over that
/// polygon stands for it. The faces that face the contact (outward normal
/// within 25° of `-normal`, centroid near the plane and inside the
/// polygon) carry it, each assigned to the nearest corner, whose solver
/// contact carries that part of the force.
pub(super) fn face_patches(
    mesh: &TetMesh,
    region: Option<&[bool]>,
    corners: &[Point3<f64>],
    normal: &Vector3<f64>,
) -> Vec<Vec<(usize, f64)>> {
    let (u, v) = plane_axes(normal);
    let origin = corners.iter().fold(Vector3::zeros(), |s, c| s + c.coords) / corners.len() as f64;
    let project = |p: &Point3<f64>| {
        let d = p.coords - origin;
        [d.dot(&u), d.dot(&v)]
    };
    let flat: Vec<[f64; 2]> = corners.iter().map(project).collect();
    let hull = convex_hull(&flat);
    let diameter = flat
        .iter()
        .flat_map(|a| flat.iter().map(move |b| (a[0] - b[0]).hypot(a[1] - b[1])))
        .fold(0.0, f64::max);
    // The solver's points lie on the contact's plane to its penetration
    // (micrometres); the body's faces there, to its mesh's flatness.
    let plane_tolerance_m = 0.02 * diameter;
    let facing = 25f64.to_radians().cos();
    let faces = &mesh.topology().boundary_faces;
    let usable = usable_faces(faces, region);
    let mut patches: Vec<Vec<(usize, f64)>> = vec![Vec::new(); corners.len()];
    for (index, face) in faces.iter().enumerate().filter(|(_, f)| usable(f)) {
        let [a, b, c] = face.nodes.map(|n| mesh.nodes()[n as usize]);
        let area_normal = (b - a).cross(&(c - a));
        let area = 0.5 * area_normal.norm();
        if area <= 0.0 || -area_normal.dot(normal) < facing * 2.0 * area {
            continue;
        }
        let centroid = Point3::from((a.coords + b.coords + c.coords) / 3.0);
        if (centroid.coords - origin).dot(normal).abs() > plane_tolerance_m {
            continue;
        }
        let q = project(&centroid);
        if !inside_convex(&hull, &q) {
            continue;
        }
        let distance = |k: usize| (flat[k][0] - q[0]).powi(2) + (flat[k][1] - q[1]).powi(2);
        if let Some(nearest) = (0..flat.len()).min_by(|&i, &j| distance(i).total_cmp(&distance(j)))
        {
            patches[nearest].push((index, area));
        }
    }
    for patch in &mut patches {
        let total: f64 = patch.iter().map(|p| p.1).sum();
        patch.iter_mut().for_each(|p| p.1 /= total);
    }
    patches
}

/// Which of `faces` a load on `region`'s tets may use: those of its tets,
/// or all of them when none is (a piece cut out of the interior has no
/// original face).
fn usable_faces<'a>(
    faces: &'a [BoundaryFace],
    region: Option<&'a [bool]>,
) -> impl Fn(&BoundaryFace) -> bool + 'a {
    let in_region = move |f: &BoundaryFace| region.is_none_or(|r| r[f.tet as usize]);
    let any_in_region = faces.iter().any(in_region);
    move |f| !any_in_region || in_region(f)
}

/// Two unit vectors spanning the plane normal to `normal`.
fn plane_axes(normal: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let across = if normal.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let u = normal.cross(&across).normalize();
    (u, normal.cross(&u).normalize())
}

/// The convex hull of `points`, counter-clockwise (Andrew's monotone
/// chain).
fn convex_hull(points: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    sorted.dedup();
    if sorted.len() < 3 {
        return sorted;
    }
    let cross = |o: &[f64; 2], a: &[f64; 2], b: &[f64; 2]| {
        (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    };
    let mut hull: Vec<[f64; 2]> = Vec::with_capacity(2 * sorted.len());
    // The lower chain left to right, then the upper one back, each point
    // kept while the chain turns left.
    for p in &sorted {
        while hull.len() >= 2 && cross(&hull[hull.len() - 2], &hull[hull.len() - 1], p) <= 0.0 {
            hull.pop();
        }
        hull.push(*p);
    }
    let lower = hull.len() + 1;
    for p in sorted.iter().rev().skip(1) {
        while hull.len() >= lower && cross(&hull[hull.len() - 2], &hull[hull.len() - 1], p) <= 0.0 {
            hull.pop();
        }
        hull.push(*p);
    }
    hull.pop();
    hull
}

/// Whether `q` lies in the counter-clockwise convex polygon `hull` (on its
/// edges included, to a part in 10⁹ of the edge's length).
fn inside_convex(hull: &[[f64; 2]], q: &[f64; 2]) -> bool {
    hull.len() >= 3
        && (0..hull.len()).all(|i| {
            let (a, b) = (hull[i], hull[(i + 1) % hull.len()]);
            let edge = [b[0] - a[0], b[1] - a[1]];
            let cross = edge[0] * (q[1] - a[1]) - edge[1] * (q[0] - a[0]);
            cross >= -1e-9 * (edge[0] * edge[0] + edge[1] * edge[1])
        })
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

/// Where the line crosses one tet: `L(s) = at_start + s per_m` are its
/// barycentric coordinates at distance `s` along the line.
struct ChordSegment {
    from_m: f64,
    to_m: f64,
    tet: usize,
    at_start: [f64; 4],
    per_m: [f64; 4],
}

/// DOF weights (summing along `normal` to 1) of the mean displacement
/// along `normal` over the chord through the body from `point` along the
/// inward `normal`, on `elastic`'s elements, or empty when the line
/// misses the body. Hertz's approach `δ` is that of points distant from
/// the contact (Johnson §4.2), whose own indentation Hertz's `k` counts;
/// a mesh loaded at a few surface nodes indents under them too, by an
/// amount that grows as its elements shrink. Through the thickness that
/// near field averages out while the body's bending does not: the mean
/// over the chord is the deflection of a plate's middle surface.
pub(super) fn chord_weights(
    mesh: &TetMesh,
    elastic: &ElasticMesh,
    point: &Point3<f64>,
    normal: &Vector3<f64>,
) -> Vec<(usize, f64)> {
    // Two directions across the line: a tet whose corners all lie on one
    // side of a plane holding the line cannot meet it, which spares the
    // exact test below for nearly all tets.
    let (across_u, across_v) = plane_axes(normal);
    let one_side = |offsets: &[Vector3<f64>; 4], axis: &Vector3<f64>, tolerance: f64| {
        let d = offsets.map(|o| o.dot(axis));
        d.iter().all(|&x| x > tolerance) || d.iter().all(|&x| x < -tolerance)
    };
    // Barycentric coordinates along the line: L(s) = a + s b.
    let mut segments: Vec<ChordSegment> = Vec::new();
    for (t, tet) in mesh.tets().iter().enumerate() {
        let [p0, p1, p2, p3] = tet.map(|n| mesh.nodes()[n as usize]);
        let offsets = [p0 - point, p1 - point, p2 - point, p3 - point];
        // Far above the exact test's slack (1e-9 in barycentric terms).
        let tolerance = 1e-6 * (p1 - p0).norm().max((p2 - p0).norm()).max((p3 - p0).norm());
        if one_side(&offsets, &across_u, tolerance) || one_side(&offsets, &across_v, tolerance) {
            continue;
        }
        let Some(inverse) = Matrix3::from_columns(&[p1 - p0, p2 - p0, p3 - p0]).try_inverse()
        else {
            continue;
        };
        let a3 = inverse * (point - p0);
        let b3 = inverse * normal;
        let a = [1.0 - a3.sum(), a3.x, a3.y, a3.z];
        let b = [-b3.sum(), b3.x, b3.y, b3.z];
        let (mut low, mut high) = (0.0f64, f64::INFINITY);
        for (ai, bi) in a.iter().zip(&b) {
            // L_i ≥ −ε, the slack taking in a point on a face or an edge.
            let ai = ai + 1e-9;
            if bi.abs() < 1e-300 {
                if ai < 0.0 {
                    high = -1.0;
                }
            } else if *bi > 0.0 {
                low = low.max(-ai / bi);
            } else {
                high = high.min(-ai / bi);
            }
        }
        if high > low {
            segments.push(ChordSegment {
                from_m: low,
                to_m: high,
                tet: t,
                at_start: a,
                per_m: b,
            });
        }
    }
    segments.sort_by(|x, y| x.from_m.total_cmp(&y.from_m));
    // The chord: the segments joined from the contact point to where the
    // line first leaves the body.
    let scale = segments
        .iter()
        .map(|s| s.to_m - s.from_m)
        .fold(0.0, f64::max);
    let mut end = 0.0f64;
    let mut chord = Vec::new();
    for segment in &segments {
        if segment.from_m > end + 1e-6 * scale {
            break;
        }
        end = end.max(segment.to_m);
        chord.push(segment);
    }
    if chord.is_empty() || end <= 0.0 {
        return Vec::new();
    }
    // Segments overlap only where the line runs along a shared face;
    // the union's length then exceeds each part's, and the weights are
    // normalised by their sum.
    const GAUSS_3: [(f64, f64); 3] = [
        (-0.774_596_669_241_483_4, 5.0 / 9.0),
        (0.0, 8.0 / 9.0),
        (0.774_596_669_241_483_4, 5.0 / 9.0),
    ];
    let quadratic = elastic.order() == ElementOrder::Quadratic;
    let mut weights: Vec<(usize, f64)> = Vec::new();
    for segment in &chord {
        let (a, b) = (segment.at_start, segment.per_m);
        let (mid, half) = (
            0.5 * (segment.from_m + segment.to_m),
            0.5 * (segment.to_m - segment.from_m),
        );
        let nodes = elastic.element_nodes(segment.tet);
        for (xi, w) in GAUSS_3 {
            let s = mid + half * xi;
            let l = [0, 1, 2, 3].map(|i| (a[i] + s * b[i]).clamp(0.0, 1.0));
            let mut shape = [0.0f64; 10];
            if quadratic {
                for i in 0..4 {
                    shape[i] = l[i] * (2.0 * l[i] - 1.0);
                }
                for (e, [i, j]) in TET_EDGES.iter().enumerate() {
                    shape[4 + e] = 4.0 * l[*i] * l[*j];
                }
            } else {
                shape[..4].copy_from_slice(&l);
            }
            for (node, n) in nodes.iter().zip(shape) {
                for axis in 0..3 {
                    weights.push((3 * *node as usize + axis, w * half * n * normal[axis]));
                }
            }
        }
    }
    let total: f64 = weights.iter().map(|&(dof, w)| w * normal[dof % 3]).sum();
    if total.abs() > 0.0 {
        weights.iter_mut().for_each(|w| w.1 /= total);
    }
    weights
}
