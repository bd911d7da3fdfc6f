//! Fracture pattern statistics of a broken plate (Glondu 2012 §5.1.1):
//! the fragments and their areas (S1), the cracks and their lengths (S2),
//! the junctions, their density and angles (S3), and the distance between
//! two patterns of eq. (5.1).
//!
//! Glondu measures these on images of broken plates, lengths in the
//! plate's plane, and normalises them: fragment areas by the total area,
//! crack lengths by its square root (§5.1.3.1). On the tet mesh of a plate
//! of uniform thickness `t` the same quantities are exact without drawing
//! anything: a fragment's area is its volume over `t`, so its normalised
//! area is its volume fraction, and a crack through the thickness is as
//! long as its surface area over `t`. The plate's normal is the direction
//! in which its nodes spread least, and `t` their extent along it.
//!
//! - A crack is the whole surface between two fragments: the crack
//!   polygons (Glondu §3.1.2) of the tets whose nodes lie in exactly those
//!   two fragments. A crack that separates nothing (it stopped inside the
//!   body) is not seen: these are the statistics of the pieces.
//! - A junction is a group of tets, connected through shared nodes, whose
//!   nodes lie in three fragments or more: where cracks meet. The crack
//!   polygons inside them are left out of the lengths, which are therefore
//!   short by at most an element per crack end. The angles between its
//!   cracks are measured from each crack's pieces within a few elements of
//!   it (the principal axis of their positions).

use super::{FractureState, Fragment};
use crate::mesh::{TetMesh, TET_EDGES};
use nalgebra::{Matrix3, Point3, Vector3};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The statistics of one broken plate (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pattern {
    /// The plate's thickness: its nodes' extent along its normal (m).
    pub thickness_m: f64,
    /// The plate's area: its volume over its thickness (m²).
    pub area_m2: f64,
    /// Fragments that own nodes (the pieces one sees).
    pub fragments: usize,
    /// Gap fragments (Glondu Fig. 3.6: slivers where three or four
    /// fragments meet in one tet), counted apart and left out of the areas.
    pub gap_fragments: usize,
    /// Each fragment's area over the plate's area, largest first (S1).
    pub fragment_areas: Vec<f64>,
    /// Each crack's length over the square root of the plate's area,
    /// longest first (S2).
    pub crack_lengths: Vec<f64>,
    /// How many fragments meet at each junction, most first (S3).
    pub junction_degrees: Vec<u32>,
    /// The angles between neighbouring cracks around each junction, all
    /// junctions together, smallest first (°; a junction's sum to 360).
    /// A crack's direction is that of its pieces within three mean edge
    /// lengths of the junction's centre.
    pub junction_angles_deg: Vec<f64>,
}

impl Pattern {
    /// The pattern of `mesh` broken as `state` says, whose fragments are
    /// `fragments` ([`super::fragments`] of the same state).
    pub fn of(mesh: &TetMesh, state: &FractureState, fragments: &[Fragment]) -> Self {
        let volume_m3 = mesh.volume();
        let (normal, thickness_m) = plate_normal(mesh.nodes());
        let area_m2 = volume_m3 / thickness_m;
        let mut fragment_areas: Vec<f64> = fragments
            .iter()
            .filter(|f| !f.is_gap)
            .map(|f| f.volume_m3 / volume_m3)
            .collect();
        fragment_areas.sort_by(|a, b| b.total_cmp(a));
        let cracks = cracks_and_junctions(mesh, state, &normal);
        let length_scale = thickness_m * area_m2.sqrt();
        let mut crack_lengths: Vec<f64> =
            cracks.surfaces.values().map(|s| s / length_scale).collect();
        crack_lengths.sort_by(|a, b| b.total_cmp(a));
        Self {
            thickness_m,
            area_m2,
            fragments: fragment_areas.len(),
            gap_fragments: fragments.len() - fragment_areas.len(),
            fragment_areas,
            crack_lengths,
            junction_degrees: cracks.degrees,
            junction_angles_deg: cracks.angles_deg,
        }
    }

    /// Junctions per unit of normalised area (the plate's area is 1): the
    /// junction density of S3.
    pub fn junction_density(&self) -> f64 {
        self.junction_degrees.len() as f64
    }

    /// The distance of eq. (5.1) between two patterns.
    pub fn distance(&self, other: &Pattern, weights: &PatternWeights) -> PatternDistance {
        let fragments = emd_1d(&self.fragment_areas, &other.fragment_areas);
        let cracks = emd_1d(&self.crack_lengths, &other.crack_lengths);
        let junctions = (self.junction_density() - other.junction_density()).abs();
        PatternDistance {
            fragments,
            cracks,
            junctions,
            total: weights.fragments * fragments
                + weights.cracks * cracks
                + weights.junctions * junctions,
        }
    }
}

/// The weights of eq. (5.1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PatternWeights {
    /// w_frag.
    pub fragments: f64,
    /// w_crack.
    pub cracks: f64,
    /// w_junc.
    pub junctions: f64,
}

impl Default for PatternWeights {
    /// Glondu's (§5.1.3.2: 3, 1, 1, from the user study of §5.1.2, where
    /// fragment statistics mattered most).
    fn default() -> Self {
        Self {
            fragments: 3.0,
            cracks: 1.0,
            junctions: 1.0,
        }
    }
}

/// The terms of eq. (5.1) and their weighted sum.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PatternDistance {
    /// EMD between the normalised fragment areas.
    pub fragments: f64,
    /// EMD between the normalised crack lengths.
    pub cracks: f64,
    /// EMD between the junction densities (two single values: their
    /// difference).
    pub junctions: f64,
    /// w_frag·fragments + w_crack·cracks + w_junc·junctions.
    pub total: f64,
}

/// The earth mover's distance between two samples of values on a line, each
/// value of a sample carrying an equal share of its unit mass (Rubner et
/// al. 1998). In one dimension it is the area between the two cumulative
/// distributions. An empty sample is a single value 0 (no crack: no
/// length).
pub fn emd_1d(a: &[f64], b: &[f64]) -> f64 {
    let sorted = |v: &[f64]| {
        let mut v: Vec<f64> = if v.is_empty() { vec![0.0] } else { v.to_vec() };
        v.sort_by(f64::total_cmp);
        v
    };
    let (a, b) = (sorted(a), sorted(b));
    let (wa, wb) = (1.0 / a.len() as f64, 1.0 / b.len() as f64);
    let (mut i, mut j) = (0, 0);
    let (mut fa, mut fb) = (0.0f64, 0.0f64);
    let mut x = a[0].min(b[0]);
    let mut area = 0.0;
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(&u), Some(&v)) => u.min(v),
            (Some(&u), None) => u,
            (None, Some(&v)) => v,
            (None, None) => unreachable!("loop condition"),
        };
        area += (fa - fb).abs() * (next - x);
        x = next;
        while a.get(i) == Some(&next) {
            fa += wa;
            i += 1;
        }
        while b.get(j) == Some(&next) {
            fb += wb;
            j += 1;
        }
    }
    area
}

/// The plate's normal (the direction in which `nodes` spread least) and
/// their extent along it.
fn plate_normal(nodes: &[Point3<f64>]) -> (Vector3<f64>, f64) {
    let n = nodes.len().max(1) as f64;
    let mean = nodes.iter().fold(Vector3::zeros(), |s, p| s + p.coords) / n;
    let covariance = nodes.iter().fold(Matrix3::zeros(), |s, p| {
        let d = p.coords - mean;
        s + d * d.transpose()
    }) / n;
    let eigen = covariance.symmetric_eigen();
    let normal = eigen
        .eigenvectors
        .column(eigen.eigenvalues.imin())
        .into_owned();
    let (lo, hi) = nodes.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
        let h = p.coords.dot(&normal);
        (lo.min(h), hi.max(h))
    });
    (normal, hi - lo)
}

/// Weights and in-plane positions (u, v) of a crack's pieces.
type WeightedPoints = Vec<(f64, [f64; 2])>;

/// One tet's part of the crack between two fragments.
struct CrackPiece {
    fragments: (u32, u32),
    centroid_m: Point3<f64>,
    area_m2: f64,
}

/// Cracks and junctions of a broken plate.
struct CracksAndJunctions {
    /// The crack surface between each pair of fragments (m²).
    surfaces: BTreeMap<(u32, u32), f64>,
    /// How many fragments meet at each junction, most first.
    degrees: Vec<u32>,
    /// The angles between neighbouring cracks around each junction (°).
    angles_deg: Vec<f64>,
}

fn cracks_and_junctions(
    mesh: &TetMesh,
    state: &FractureState,
    normal: &Vector3<f64>,
) -> CracksAndJunctions {
    let fragment_of = state.node_fragments();
    let mut pieces = Vec::new();
    let mut junction_tets = Vec::new();
    for (t, tet) in mesh.tets().iter().enumerate() {
        let f = tet.map(|n| fragment_of[n as usize]);
        let mut distinct = f.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        match distinct.len() {
            1 => {}
            2 => pieces.push(crack_piece(mesh, state, t, &f, (distinct[0], distinct[1]))),
            _ => junction_tets.push(t),
        }
    }
    let mut surfaces = BTreeMap::new();
    for piece in &pieces {
        *surfaces.entry(piece.fragments).or_insert(0.0) += piece.area_m2;
    }
    let junctions = junctions(mesh, fragment_of, &junction_tets);
    let mut degrees: Vec<u32> = junctions.iter().map(|j| j.fragments.len() as u32).collect();
    degrees.sort_unstable_by(|a, b| b.cmp(a));
    // The cracks leave a junction in the directions of their pieces within
    // a few elements of it (beyond the junction's own tets).
    let radius_m = JUNCTION_RADIUS_EDGES * mesh.mean_edge_length();
    let u = normal.cross(&Vector3::x());
    let u = if u.norm() > 0.5 {
        u.normalize()
    } else {
        normal.cross(&Vector3::y()).normalize()
    };
    let v = normal.cross(&u);
    let mut angles_deg = Vec::new();
    for junction in &junctions {
        // Per crack: its pieces' weights and in-plane positions (u, v).
        let mut near: BTreeMap<(u32, u32), WeightedPoints> = BTreeMap::new();
        for piece in &pieces {
            let (a, b) = piece.fragments;
            let d = piece.centroid_m - junction.centre_m;
            let d = d - normal * d.dot(normal);
            if d.norm() <= radius_m
                && junction.fragments.binary_search(&a).is_ok()
                && junction.fragments.binary_search(&b).is_ok()
            {
                near.entry(piece.fragments)
                    .or_default()
                    .push((piece.area_m2, [d.dot(&u), d.dot(&v)]));
            }
        }
        let mut around: Vec<f64> = near.values().filter_map(|p| direction(p)).collect();
        if around.len() < 2 {
            continue;
        }
        around.sort_by(f64::total_cmp);
        let full_turn = std::f64::consts::TAU;
        for (i, angle) in around.iter().enumerate() {
            let next = around.get(i + 1).copied().unwrap_or(around[0] + full_turn);
            angles_deg.push((next - angle).to_degrees());
        }
    }
    angles_deg.sort_by(f64::total_cmp);
    CracksAndJunctions {
        surfaces,
        degrees,
        angles_deg,
    }
}

/// The direction (angle in the plate's plane) in which a crack leaves a
/// junction, from its pieces near it (weights and positions relative to
/// the junction's centre): the principal axis of the weighted positions
/// (a straight crack's pieces lie on it, wherever the junction's centre
/// is), pointing away from the centre. `None` without weight.
fn direction(pieces: &[(f64, [f64; 2])]) -> Option<f64> {
    let w: f64 = pieces.iter().map(|(w, _)| w).sum();
    if w <= 0.0 {
        return None;
    }
    let mean = pieces.iter().fold([0.0; 2], |m, (wi, p)| {
        [m[0] + wi * p[0] / w, m[1] + wi * p[1] / w]
    });
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for (wi, p) in pieces {
        let (dx, dy) = (p[0] - mean[0], p[1] - mean[1]);
        sxx += wi * dx * dx;
        syy += wi * dy * dy;
        sxy += wi * dx * dy;
    }
    let axis = if sxx + syy > 0.0 {
        let theta = 0.5 * (2.0 * sxy).atan2(sxx - syy);
        [theta.cos(), theta.sin()]
    } else {
        mean
    };
    let sign = if axis[0] * mean[0] + axis[1] * mean[1] < 0.0 {
        -1.0
    } else {
        1.0
    };
    Some((sign * axis[1]).atan2(sign * axis[0]))
}

/// How far from a junction's centre its cracks' directions are measured,
/// in mean edge lengths: past the junction's own tets (about one edge
/// around its centre), within a few elements, where a crack is straight.
const JUNCTION_RADIUS_EDGES: f64 = 3.0;

/// The crack polygon of tet `t`, whose nodes (fragments `f`) lie in two
/// fragments: a triangle around a lone node, or a quad between two pairs,
/// through the cut points of the edges between the fragments.
fn crack_piece(
    mesh: &TetMesh,
    state: &FractureState,
    t: usize,
    f: &[u32; 4],
    fragments: (u32, u32),
) -> CrackPiece {
    let nodes = mesh.nodes();
    let topology = mesh.topology();
    let cut = |k: usize| {
        let e = topology.tet_edges[t][k] as usize;
        let [a, b] = topology.edges[e];
        let s = state.cut_position(e).unwrap_or(0.5);
        let (pa, pb) = (nodes[a as usize], nodes[b as usize]);
        pa + (pb - pa) * s
    };
    let separating: Vec<usize> = (0..6)
        .filter(|&k| f[TET_EDGES[k][0]] != f[TET_EDGES[k][1]])
        .collect();
    let corners: Vec<Point3<f64>> = separating.iter().map(|&k| cut(k)).collect();
    let centroid_m = Point3::from(
        corners.iter().fold(Vector3::zeros(), |s, p| s + p.coords) / corners.len() as f64,
    );
    let area_m2 = match corners.as_slice() {
        [p0, p1, p2] => 0.5 * (p1 - p0).cross(&(p2 - p0)).norm(),
        _ => quad_area(&separating, &cut),
    };
    CrackPiece {
        fragments,
        centroid_m,
        area_m2,
    }
}

/// The area of the quad whose corners are the cut points of four
/// separating local edges (a tet split two nodes against two): half the
/// norm of the cross product of its diagonals, which join the cut points of
/// edges sharing no node.
fn quad_area(separating: &[usize], cut: &impl Fn(usize) -> Point3<f64>) -> f64 {
    let shares_node = |k: usize, l: usize| {
        let (a, b) = (TET_EDGES[k], TET_EDGES[l]);
        a.iter().any(|n| b.contains(n))
    };
    let k0 = separating[0];
    let Some(&opposite) = separating[1..].iter().find(|&&l| !shares_node(k0, l)) else {
        return 0.0;
    };
    let others: Vec<usize> = separating[1..]
        .iter()
        .copied()
        .filter(|&l| l != opposite)
        .collect();
    let [l0, l1] = others[..] else {
        return 0.0;
    };
    let d1 = cut(opposite) - cut(k0);
    let d2 = cut(l1) - cut(l0);
    0.5 * d1.cross(&d2).norm()
}

/// Where three fragments or more meet.
struct Junction {
    /// The fragments of its tets' nodes, ascending.
    fragments: Vec<u32>,
    /// The mean of its tets' centroids (m).
    centre_m: Point3<f64>,
}

/// Groups junction tets that share a node (union-find), in order of their
/// first tet.
fn junctions(mesh: &TetMesh, fragment_of: &[u32], junction_tets: &[usize]) -> Vec<Junction> {
    let tets = mesh.tets();
    let mut parent: Vec<usize> = (0..junction_tets.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut first_at_node: BTreeMap<u32, usize> = BTreeMap::new();
    for (i, &t) in junction_tets.iter().enumerate() {
        for &n in &tets[t] {
            match first_at_node.get(&n) {
                Some(&j) => {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    parent[a] = b;
                }
                None => {
                    first_at_node.insert(n, i);
                }
            }
        }
    }
    let mut groups: BTreeMap<usize, (Vec<u32>, Vector3<f64>, usize)> = BTreeMap::new();
    for (i, &t) in junction_tets.iter().enumerate() {
        let r = root(&mut parent, i);
        let group = groups
            .entry(r)
            .or_insert_with(|| (Vec::new(), Vector3::zeros(), 0));
        group
            .0
            .extend(tets[t].iter().map(|&n| fragment_of[n as usize]));
        group.1 += mesh.tet_centroid(t).coords;
        group.2 += 1;
    }
    groups
        .into_values()
        .map(|(mut fragments, sum, count)| {
            fragments.sort_unstable();
            fragments.dedup();
            Junction {
                fragments,
                centre_m: Point3::from(sum / count as f64),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::emd_1d;

    #[test]
    fn the_earth_movers_distance_on_a_line_is_the_area_between_the_distributions() {
        assert_eq!(emd_1d(&[0.5, 0.5], &[0.5, 0.5]), 0.0);
        // Halves against quarters: all the mass moves by 0.25.
        assert!((emd_1d(&[0.5, 0.5], &[0.25; 4]) - 0.25).abs() < 1e-15);
        // Half the mass moves by 1, the other half stays.
        assert!((emd_1d(&[0.0, 1.0], &[0.0, 0.0]) - 0.5).abs() < 1e-15);
        assert!(
            (emd_1d(&[0.0, 1.0], &[0.0, 0.0]) - emd_1d(&[0.0, 0.0], &[0.0, 1.0])).abs() < 1e-15
        );
        // A shift moves everything by the shift.
        assert!((emd_1d(&[0.1, 0.4, 0.7], &[0.3, 0.6, 0.9]) - 0.2).abs() < 1e-12);
        // No crack is one length 0.
        assert!((emd_1d(&[], &[0.3]) - 0.3).abs() < 1e-15);
        assert_eq!(emd_1d(&[], &[]), 0.0);
    }
}
