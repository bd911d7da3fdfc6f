//! Crack propagation through the mesh (Glondu 2012 §3.2.2–3.2.3, Alg. 2):
//! breadth-first over face neighbours crossed by the surface, cutting their
//! edges, stopped by the energy balance of eqs. 3.7–3.8 and by other cracks.

use super::surface::CrackSurface;
use super::FractureState;
use crate::mesh::{TetMesh, NO_NEIGHBOUR, TET_EDGES};
use nalgebra::Point3;
use serde::Serialize;
use std::collections::{HashMap, HashSet, VecDeque};

/// Why a crack stopped growing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CrackStop {
    /// The fracture energy would exceed the available strain energy
    /// (a partial crack, ending inside the body).
    Energy,
    /// It ran into elements another crack had damaged.
    Collision,
    /// It ran through to the body's surface everywhere.
    Boundary,
}

/// One crack's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Crack {
    pub start_tet: usize,
    pub origin_m: [f64; 3],
    pub normal: [f64; 3],
    /// Elements this crack damaged.
    pub elements: usize,
    /// Crack surface area inside those elements (m²).
    pub area_m2: f64,
    /// E_f = Σ A_e G_c and E_s = Σ A_e γ η_e at the stop (J).
    pub fracture_energy_j: f64,
    pub available_energy_j: f64,
    pub stop: CrackStop,
    /// Fragment identifiers this crack created (empty for a partial crack).
    pub new_fragments: Vec<u32>,
}

/// Material and model constants of the energy stop.
#[derive(Debug, Clone, Copy)]
pub struct EnergyBalance {
    /// G_c (J/m²).
    pub toughness_j_m2: f64,
    /// γ (m): converts strain-energy density times area into energy (eq. 3.8).
    pub energy_length_m: f64,
}

/// The part of the surface inside one tet, from the surface values at its nodes.
struct Section {
    /// Points where the surface crosses the tet's edges: (local edge, fraction).
    crossings: Vec<(usize, f64)>,
    area_m2: f64,
}

/// `s < 0` is one side, `s ≥ 0` the other (Glondu's crossing rule).
fn crossed(values: &[f64; 4]) -> bool {
    values.iter().any(|&v| v < 0.0) && values.iter().any(|&v| v >= 0.0)
}

fn section(points: &[Point3<f64>; 4], values: &[f64; 4]) -> Section {
    let mut crossings = Vec::with_capacity(4);
    let mut at = Vec::with_capacity(4);
    for (k, &[a, b]) in TET_EDGES.iter().enumerate() {
        if (values[a] < 0.0) != (values[b] < 0.0) {
            let t = values[a] / (values[a] - values[b]);
            crossings.push((k, t));
            at.push(points[a] + (points[b] - points[a]) * t);
        }
    }
    let area_m2 = match at.len() {
        3 => 0.5 * (at[1] - at[0]).cross(&(at[2] - at[0])).norm(),
        4 => {
            // The 2|2 split: TET_EDGES order puts the crossed edges as
            // (a–c, a–d, b–c, b–d) for sides {a, b}, {c, d}; the cycle is
            // a–c, b–c, b–d, a–d, i.e. indices 0, 2, 3, 1. Vector area of a
            // (possibly non-planar) quad: half the cross product of its diagonals.
            0.5 * (at[3] - at[0]).cross(&(at[1] - at[2])).norm()
        }
        _ => 0.0,
    };
    Section { crossings, area_m2 }
}

/// Propagates one crack from `start` (Alg. 2) and updates the fragment
/// identifiers of the fragments it crossed (Alg. 1). `energy_density(e)` is
/// η_e, the strain-energy density of element e (J/m³) in the loading that
/// opened the crack. Cost: linear in the elements crossed, plus the flood
/// fill of the fragments they belong to.
pub fn propagate(
    mesh: &TetMesh,
    state: &mut FractureState,
    surface: &CrackSurface,
    start: usize,
    balance: &EnergyBalance,
    energy_density: &dyn Fn(usize) -> f64,
) -> Crack {
    let topo = mesh.topology();
    // Surface values per node, each computed once: a node is shared by
    // about twenty tets, and the noise is the dearest part of s(p).
    let mut node_values: HashMap<u32, f64> = HashMap::new();
    let mut values_of = |t: usize| {
        mesh.tets()[t].map(|n| {
            *node_values
                .entry(n)
                .or_insert_with(|| surface.value(&mesh.nodes()[n as usize]))
        })
    };
    let origin = surface.origin();
    let normal = surface.normal();
    let mut crack = Crack {
        start_tet: start,
        origin_m: [origin.x, origin.y, origin.z],
        normal: [normal.x, normal.y, normal.z],
        elements: 0,
        area_m2: 0.0,
        fracture_energy_j: 0.0,
        available_energy_j: 0.0,
        stop: CrackStop::Collision,
        new_fragments: Vec::new(),
    };
    let mut seeds: Vec<u32> = Vec::new();
    if state.is_damaged(start) {
        return crack;
    }
    let (mut stopped_by_energy, mut collided) = (false, false);
    let mut own: HashSet<usize> = HashSet::new();
    let mut queue = VecDeque::new();
    // The start element is entered whatever the balance: the crack exists
    // once initiation says so.
    state.set_damaged(start);
    own.insert(start);
    queue.push_back(start);
    while let Some(e) = queue.pop_front() {
        let points = mesh.tet_points(e);
        let values = values_of(e);
        let cut = section(&points, &values);
        crack.elements += 1;
        crack.area_m2 += cut.area_m2;
        crack.fracture_energy_j += cut.area_m2 * balance.toughness_j_m2;
        crack.available_energy_j += cut.area_m2 * balance.energy_length_m * energy_density(e);
        let tet = mesh.tets()[e];
        for &(local, t) in &cut.crossings {
            let edge = topo.tet_edges[e][local] as usize;
            let [a, b] = TET_EDGES[local];
            // Edge positions run from the lower node index to the higher.
            let position = if tet[a] < tet[b] { t } else { 1.0 - t };
            if state.cut(edge, position) {
                seeds.extend([tet[a], tet[b]]);
            }
        }
        for &n in &topo.face_neighbours[e] {
            if n == NO_NEIGHBOUR {
                continue;
            }
            let n = n as usize;
            if own.contains(&n) {
                continue;
            }
            let neighbour_values = values_of(n);
            if !crossed(&neighbour_values) {
                continue;
            }
            if state.is_damaged(n) {
                collided = true;
                continue;
            }
            let area = section(&mesh.tet_points(n), &neighbour_values).area_m2;
            let needed = crack.fracture_energy_j + area * balance.toughness_j_m2;
            let available =
                crack.available_energy_j + area * balance.energy_length_m * energy_density(n);
            if needed < available {
                state.set_damaged(n);
                own.insert(n);
                queue.push_back(n);
            } else {
                stopped_by_energy = true;
            }
        }
    }
    crack.new_fragments = state.split_fragments(mesh, &seeds);
    crack.stop = if stopped_by_energy {
        CrackStop::Energy
    } else if collided {
        CrackStop::Collision
    } else {
        CrackStop::Boundary
    };
    crack
}
