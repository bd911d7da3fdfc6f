//! Crack propagation through the mesh (Glondu 2012 §3.2.2–3.2.3, Alg. 2):
//! breadth-first over face neighbours crossed by the surface, cutting their
//! edges, stopped by the energy balance of eqs. 3.7–3.8 and by other cracks.

use super::energy::EnergyLedger;
use super::shielding::{CrackShield, SurfaceMoments};
use super::surface::CrackSurface;
use super::FractureState;
use crate::mesh::{TetMesh, NO_NEIGHBOUR, TET_EDGES};
use nalgebra::Point3;
use serde::Serialize;
use std::collections::VecDeque;

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
    /// The tet where the crack started.
    pub start_tet: usize,
    /// Point the crack plane passes through at its start (m).
    pub origin_m: [f64; 3],
    /// Unit normal of the crack plane.
    pub normal: [f64; 3],
    /// Elements this crack damaged.
    pub elements: usize,
    /// Crack surface area inside those elements (m²).
    pub area_m2: f64,
    /// E_f = Σ A_e G_c and E_s = Σ A_e γ η_e at the stop (J).
    pub fracture_energy_j: f64,
    /// Energy available to the crack at the stop, Σ A_e γ η_e (J).
    pub available_energy_j: f64,
    /// Why propagation stopped.
    pub stop: CrackStop,
    /// Where it relieves stress for the cracks after it; `None` if it cut
    /// nothing.
    pub shield: Option<CrackShield>,
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
#[derive(Debug, Clone, Copy)]
struct Section {
    /// Points where the surface crosses the tet's edges: (local edge,
    /// fraction); the first `crossing_count` are set.
    crossings: [(usize, f64); 4],
    crossing_count: usize,
    area_m2: f64,
    /// The crossing points, in order around the section.
    corners: [Point3<f64>; 4],
}

/// `s < 0` is one side, `s ≥ 0` the other (Glondu's crossing rule).
fn crossed(values: &[f64; 4]) -> bool {
    values.iter().any(|&v| v < 0.0) && values.iter().any(|&v| v >= 0.0)
}

fn section(points: &[Point3<f64>; 4], values: &[f64; 4]) -> Section {
    let mut crossings = [(0, 0.0); 4];
    let mut at = [Point3::origin(); 4];
    let mut count = 0;
    for (k, &[a, b]) in TET_EDGES.iter().enumerate() {
        if (values[a] < 0.0) != (values[b] < 0.0) && count < 4 {
            let t = values[a] / (values[a] - values[b]);
            crossings[count] = (k, t);
            at[count] = points[a] + (points[b] - points[a]) * t;
            count += 1;
        }
    }
    let area_m2 = match count {
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
    let corners = match count {
        4 => [at[0], at[2], at[3], at[1]],
        _ => at,
    };
    Section {
        crossings,
        crossing_count: count,
        area_m2,
        corners,
    }
}

impl Section {
    /// Adds the section's triangles, relative to `origin`, to `moments`.
    fn add_to(&self, origin: &Point3<f64>, moments: &mut SurfaceMoments) {
        let c = self.corners.map(|p| p - origin);
        if self.crossing_count >= 3 {
            moments.add_triangle(c[0], c[1], c[2]);
        }
        if self.crossing_count == 4 {
            moments.add_triangle(c[0], c[2], c[3]);
        }
    }
}

/// Working memory of crack propagation on one mesh, reused from crack to
/// crack so that a crack costs what it crosses, not the size of the body.
/// Entries are valid for the crack whose number they carry, so nothing is
/// cleared between cracks. It also holds the nodes of the edges cut since
/// the last [`CrackScratch::update_fragments`].
#[derive(Debug, Clone)]
pub struct CrackScratch {
    crack: u32,
    /// Per node: the crack its `node_value` was computed for, and the crack
    /// for which it is exact (else it only has the side of the surface).
    node_crack: Vec<u32>,
    node_exact: Vec<u32>,
    node_value: Vec<f64>,
    /// Per tet: the crack that entered it.
    tet_crack: Vec<u32>,
    /// Entered elements to visit, with η if the energy stop asked for it.
    queue: VecDeque<(usize, Section, Option<f64>)>,
    /// Both nodes of every edge cut since the fragments were last updated.
    seeds: Vec<u32>,
    /// The current crack's surface moments, for its shield.
    moments: SurfaceMoments,
    /// The mesh's mean edge length (m).
    element_m: f64,
}

impl CrackScratch {
    /// Scratch sized for `mesh`.
    pub fn new(mesh: &TetMesh) -> Self {
        Self {
            crack: 0,
            node_crack: vec![0; mesh.node_count()],
            node_exact: vec![0; mesh.node_count()],
            node_value: vec![0.0; mesh.node_count()],
            tet_crack: vec![0; mesh.tet_count()],
            queue: VecDeque::new(),
            seeds: Vec::new(),
            moments: SurfaceMoments::default(),
            element_m: mesh.mean_edge_length(),
        }
    }

    /// Starts a new crack; after 2³² − 1 cracks the stamps wrap and are reset.
    fn next_crack(&mut self) {
        self.crack = self.crack.wrapping_add(1);
        if self.crack == 0 {
            self.node_crack.fill(0);
            self.node_exact.fill(0);
            self.tet_crack.fill(0);
            self.crack = 1;
        }
        self.queue.clear();
        self.moments.clear();
    }

    /// Re-labels the fragments the cracks propagated since the last update
    /// have split (Alg. 1, `FractureState::split_fragments`); returns the
    /// new identifiers. Once per event rather than per crack: nothing
    /// during an event reads the fragment identifiers, and the cracks of a
    /// shattering event would otherwise flood the same pieces again and
    /// again (the 52 cracks of the 175k-tet benchmark event visited about
    /// 110k nodes of its 33k).
    pub fn update_fragments(&mut self, mesh: &TetMesh, state: &mut FractureState) -> Vec<u32> {
        let created = state.split_fragments(mesh, &self.seeds);
        self.seeds.clear();
        created
    }

    /// The surface values at the nodes of tet `t`, each node's computed once
    /// per crack: a node is shared by about twenty tets, and the noise is
    /// the dearest part of s(p).
    fn values(&mut self, mesh: &TetMesh, surface: &CrackSurface, t: usize) -> [f64; 4] {
        mesh.tets()[t].map(|n| self.node_value(mesh, surface, n as usize, true))
    }

    /// Values at the nodes of tet `t` good enough to tell whether the
    /// surface crosses it: exact near the surface, the side beyond the
    /// noise amplitude ([`CrackSurface::value_or_side`]). Most neighbours
    /// a crack tests but does not cross need no noise at all.
    fn sides(&mut self, mesh: &TetMesh, surface: &CrackSurface, t: usize) -> [f64; 4] {
        mesh.tets()[t].map(|n| self.node_value(mesh, surface, n as usize, false))
    }

    /// Node `n`'s value for this crack, exact if `exact` (else possibly
    /// only its side), computed at most once each way.
    fn node_value(&mut self, mesh: &TetMesh, surface: &CrackSurface, n: usize, exact: bool) -> f64 {
        let known = if exact {
            self.node_exact[n] == self.crack
        } else {
            self.node_crack[n] == self.crack
        };
        if !known {
            let p = &mesh.nodes()[n];
            let (value, is_exact) = if exact {
                (surface.value(p), true)
            } else {
                surface.value_or_side(p)
            };
            self.node_crack[n] = self.crack;
            if is_exact {
                self.node_exact[n] = self.crack;
            }
            self.node_value[n] = value;
        }
        self.node_value[n]
    }
}

/// Propagates one crack from `start` (Alg. 2) with working memory
/// `scratch` made for `mesh`; the fragment identifiers it splits are
/// updated by [`CrackScratch::update_fragments`] (Alg. 1), once after an
/// event's last crack. `energy_density(e)` is η_e, the strain-energy
/// density of element e (J/m³) in the loading that opened the crack, or
/// the part of it the crack releases
/// ([`super::StrainEnergy::density_for`]), asked at most once per element
/// tested (every element entered, and those the energy stop turns away).
/// Cost: linear in the elements crossed and their neighbours.
pub fn propagate(
    scratch: &mut CrackScratch,
    mesh: &TetMesh,
    state: &mut FractureState,
    surface: &CrackSurface,
    start: usize,
    balance: &EnergyBalance,
    energy_density: &mut dyn FnMut(usize) -> f64,
) -> Crack {
    let mut ledger = EnergyLedger::default();
    let mut crack = propagate_deferred(
        scratch,
        mesh,
        state,
        surface,
        start,
        balance,
        energy_density,
        &mut ledger,
    );
    crack.available_energy_j = ledger.complete(energy_density);
    crack
}

/// [`propagate`], asking `energy_density` only where the energy stop needs
/// it: the elements entered are recorded in `ledger` (empty on entry) and
/// the crack's `available_energy_j` is the ledger's known part, a lower
/// bound, until the pending densities are filled in
/// ([`EnergyLedger::complete`], [`super::energy::PendingDensities`]).
/// The crack is the same either way.
#[allow(clippy::too_many_arguments)]
pub fn propagate_deferred(
    scratch: &mut CrackScratch,
    mesh: &TetMesh,
    state: &mut FractureState,
    surface: &CrackSurface,
    start: usize,
    balance: &EnergyBalance,
    energy_density: &mut dyn FnMut(usize) -> f64,
    ledger: &mut EnergyLedger,
) -> Crack {
    let topo = mesh.topology();
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
        shield: None,
    };
    if state.is_damaged(start) {
        return crack;
    }
    scratch.next_crack();
    let (mut stopped_by_energy, mut collided) = (false, false);
    // The start element is entered whatever the balance: the crack exists
    // once initiation says so.
    let values = scratch.values(mesh, surface, start);
    let start_section = section(&mesh.tet_points(start), &values);
    state.set_damaged(start);
    scratch.tet_crack[start] = scratch.crack;
    scratch.queue.push_back((start, start_section, None));
    while let Some((e, cut, eta)) = scratch.queue.pop_front() {
        crack.elements += 1;
        crack.area_m2 += cut.area_m2;
        crack.fracture_energy_j += cut.area_m2 * balance.toughness_j_m2;
        cut.add_to(&origin, &mut scratch.moments);
        ledger.enter(e, cut.area_m2 * balance.energy_length_m, eta);
        let tet = mesh.tets()[e];
        for &(local, t) in &cut.crossings[..cut.crossing_count] {
            let edge = topo.tet_edges[e][local] as usize;
            let [a, b] = TET_EDGES[local];
            // Edge positions run from the lower node index to the higher.
            let position = if tet[a] < tet[b] { t } else { 1.0 - t };
            if state.cut(edge, position) {
                scratch.seeds.push(tet[a]);
                scratch.seeds.push(tet[b]);
            }
        }
        for &n in &topo.face_neighbours[e] {
            if n == NO_NEIGHBOUR {
                continue;
            }
            let n = n as usize;
            if scratch.tet_crack[n] == scratch.crack {
                continue;
            }
            if !crossed(&scratch.sides(mesh, surface, n)) {
                continue;
            }
            if state.is_damaged(n) {
                collided = true;
                continue;
            }
            let neighbour_values = scratch.values(mesh, surface, n);
            let neighbour = section(&mesh.tet_points(n), &neighbour_values);
            // E_f + A_n G_c < E_s + A_n γ η_n (eq. 3.7-3.8); η_n ≥ 0, so
            // E_s alone may already decide it.
            let needed = crack.fracture_energy_j + neighbour.area_m2 * balance.toughness_j_m2;
            let (enters, eta) = if ledger.exceeds(needed, energy_density) {
                (true, None)
            } else {
                let eta = energy_density(n);
                let available =
                    ledger.known_j() + neighbour.area_m2 * balance.energy_length_m * eta;
                (needed < available, Some(eta))
            };
            if enters {
                state.set_damaged(n);
                scratch.tet_crack[n] = scratch.crack;
                scratch.queue.push_back((n, neighbour, eta));
            } else {
                stopped_by_energy = true;
            }
        }
    }
    crack.available_energy_j = ledger.known_j();
    crack.stop = if stopped_by_energy {
        CrackStop::Energy
    } else if collided {
        CrackStop::Collision
    } else {
        CrackStop::Boundary
    };
    let free_tips = crack.stop == CrackStop::Energy;
    crack.shield = scratch
        .moments
        .shield(origin, normal, scratch.element_m, free_tips);
    crack
}
