//! The strain energy available to a crack (Glondu 2012 eq. 3.8): the
//! density η_e of the elements it enters, at the modal state that opened
//! it, and the ledger E_s = Σ A_e γ η_e that the energy stop weighs. With
//! a crack's normal, η is the density of the stress the crack releases,
//! the traction on its plane ([`crack_plane_stress`]): the stress along a
//! crack's plane stays when it opens.

use super::worker_local::WorkerLocal;
use crate::fem::{crack_plane_stress, strain_energy_density, TetElement};
use crate::mesh::TetMesh;
use crate::modal::{ModalDisplacement, ModalStress};
use nalgebra::{Matrix6, Vector3, Vector6};
use std::sync::{Arc, Mutex, PoisonError};

/// Pending densities evaluated per rayon task by [`PendingDensities`].
const LEDGER_TASK_ELEMENTS: usize = 256;

/// What the densities are computed from: the tables of the body's modes
/// and of the static correction's residual shapes (a column per contact,
/// the contact forces as coordinates).
#[derive(Debug, Clone, Copy)]
pub enum EnergyTables<'a> {
    /// Linear elements: η_e = ½ εᵀ C ε, the element's constant strain
    /// ε_e = B_e u_e from the displacements of its four nodes.
    Displacement {
        /// The modes' node displacements.
        modes: &'a ModalDisplacement,
        /// The residual shapes' node displacements.
        residual: Option<&'a ModalDisplacement>,
    },
    /// Quadratic elements: the mean over the element of ½ σᵀ C⁻¹ σ, σ the
    /// stress recovered at its four nodes and interpolated linearly
    /// between them ([`ModalStress`]): with `∫ L_i L_j dV = V(1 + δ_ij)/20`,
    /// `η_e = Σ_ij (1 + δ_ij)/40 · σ_iᵀ C⁻¹ σ_j`.
    NodeStress {
        /// The modes' stresses at the nodes.
        modes: &'a ModalStress,
        /// The residual shapes' stresses at the nodes.
        residual: Option<&'a ModalStress>,
    },
}

/// η_e of the elements a crack enters at one modal state, from the values
/// at the element's four nodes ([`EnergyTables`]). A node's value is
/// computed once per state: the elements a crack crosses share their nodes,
/// so this reads about a quarter of the bytes that per-element tables
/// would (see [`ModalDisplacement`]).
pub struct StrainEnergy<'a> {
    mesh: &'a TetMesh,
    tables: EnergyTables<'a>,
    stiffness: &'a Matrix6<f64>,
    /// C⁻¹, for [`EnergyTables::NodeStress`].
    compliance: Matrix6<f64>,
    /// The modal coordinates and contact forces of the current state, and
    /// its stamp (from 1).
    z: &'a [f32],
    forces: &'a [f32],
    state: u32,
    node_state: Vec<u32>,
    /// Per node at the current state: its displacement (first three) or
    /// its stress.
    node_value: Vec<[f32; 6]>,
}

impl<'a> StrainEnergy<'a> {
    /// `stiffness` is the constitutive matrix C of the body's material;
    /// the tables' residual part adds the static correction at the contact
    /// forces of each state.
    pub fn new(mesh: &'a TetMesh, tables: EnergyTables<'a>, stiffness: &'a Matrix6<f64>) -> Self {
        Self {
            mesh,
            tables,
            stiffness,
            compliance: stiffness.try_inverse().unwrap_or_else(Matrix6::zeros),
            z: &[],
            forces: &[],
            state: 0,
            node_state: Vec::new(),
            node_value: Vec::new(),
        }
    }

    /// The same densities, evaluated in bulk on the rayon pool.
    pub fn pending_densities(&self) -> PendingDensities<'a> {
        PendingDensities {
            mesh: self.mesh,
            tables: self.tables,
            stiffness: self.stiffness,
            workers: WorkerLocal::new(),
            done: Mutex::new(Vec::new()),
        }
    }

    /// Makes `z` and `forces` (one per residual shape) the state of the
    /// densities that follow; the node displacements of the current state
    /// are kept if `z` is that state.
    pub fn set_state(&mut self, z: &'a [f32], forces: &'a [f32]) {
        if std::ptr::eq(self.z, z) && self.state != 0 {
            return;
        }
        self.z = z;
        self.forces = forces;
        self.state = self.state.wrapping_add(1);
        if self.state == 0 {
            self.node_state.fill(0);
            self.state = 1;
        }
    }

    /// η (J/m³) of `element` at the state of the last [`Self::set_state`]
    /// (before any, the zero state). The first call sizes the per-node
    /// memory: an event that starts no crack allocates nothing.
    pub fn density(&mut self, element: usize) -> f64 {
        self.density_for(element, None)
    }

    /// The part of η (J/m³) of `element` that a crack of unit `normal`
    /// releases, the density of its [`crack_plane_stress`]; with no
    /// normal, the whole η ([`Self::density`]). At the state of the last
    /// [`Self::set_state`].
    pub fn density_for(&mut self, element: usize, normal: Option<&Vector3<f64>>) -> f64 {
        if self.node_state.is_empty() {
            self.node_state = vec![0; self.mesh.node_count()];
            self.node_value = vec![[0.0; 6]; self.mesh.node_count()];
        }
        let nodes = self.mesh.tets()[element];
        let values = nodes.map(|n| {
            let n = n as usize;
            if self.node_state[n] != self.state {
                self.node_state[n] = self.state;
                self.node_value[n] = self.node_value_at(n);
            }
            self.node_value[n].map(f64::from)
        });
        let density = match self.tables {
            EnergyTables::Displacement { .. } => {
                let u = values.map(|v| Vector3::new(v[0], v[1], v[2]));
                let element =
                    TetElement::new(&self.mesh.tet_points(element)).expect("validated mesh");
                let strain = element.strain(&u);
                match normal {
                    None => strain_energy_density(&strain, self.stiffness),
                    Some(n) => {
                        let released = crack_plane_stress(&(self.stiffness * strain), n);
                        0.5 * released.dot(&(self.compliance * released))
                    }
                }
            }
            EnergyTables::NodeStress { .. } => {
                let sigma = values
                    .map(Vector6::from)
                    .map(|s| normal.map_or(s, |n| crack_plane_stress(&s, n)));
                let strain = sigma.map(|s| self.compliance * s);
                let mut sum = 0.0;
                for (i, s) in sigma.iter().enumerate() {
                    for (j, e) in strain.iter().enumerate() {
                        sum += if i == j { 2.0 } else { 1.0 } * s.dot(e);
                    }
                }
                sum / 40.0
            }
        };
        // Never negative, which the ledger's lower bound relies on; only
        // rounding of a vanishing strain could make it so.
        density.max(0.0)
    }

    /// Node `n`'s displacement (padded) or stress at the current state.
    fn node_value_at(&self, n: usize) -> [f32; 6] {
        match self.tables {
            EnergyTables::Displacement { modes, residual } => {
                let mut u = modes.node_displacement(n, self.z);
                if let Some(residual) = residual {
                    let r = residual.node_displacement(n, self.forces);
                    u = std::array::from_fn(|c| u[c] + r[c]);
                }
                [u[0], u[1], u[2], 0.0, 0.0, 0.0]
            }
            EnergyTables::NodeStress { modes, residual } => {
                let mut s = modes.point_stress(n, self.z);
                if let Some(residual) = residual {
                    let r = residual.point_stress(n, self.forces);
                    s = std::array::from_fn(|c| s[c] + r[c]);
                }
                s
            }
        }
    }
}

/// E_s of one crack (eq. 3.8): Σ A_e γ η_e over the elements it entered,
/// summed in the order entered, with η_e asked only where the energy stop
/// needs it.
///
/// Every η is ≥ 0, and adding a non-negative term never lowers a rounded
/// sum, so the sum with the unknown η left out is a lower bound on E_s. A
/// crack whose fracture energy stays below that bound may enter elements
/// without asking; a shattering crack, with E_s hundreds of times E_f,
/// asks for hardly any. The rest are evaluated afterwards, in bulk
/// ([`PendingDensities`]), and E_s and every stop decision are bit for
/// bit those of asking every η as the crack goes.
#[derive(Debug, Clone, Default)]
pub struct EnergyLedger {
    elements: Vec<u32>,
    /// A_e γ (m³).
    weights_m3: Vec<f64>,
    /// η_e (J/m³); NaN until known.
    densities_j_m3: Vec<f64>,
    /// The entries before `known` all have η, and `known_j` is their sum.
    known: usize,
    known_j: f64,
}

impl EnergyLedger {
    /// Records `element` entered with weight A_e γ (m³) and, if known, its η.
    pub fn enter(&mut self, element: usize, weight_m3: f64, density_j_m3: Option<f64>) {
        self.elements.push(element as u32);
        self.weights_m3.push(weight_m3);
        self.densities_j_m3.push(density_j_m3.unwrap_or(f64::NAN));
        self.advance();
    }

    fn advance(&mut self) {
        while let Some(&eta) = self.densities_j_m3.get(self.known) {
            if eta.is_nan() {
                break;
            }
            // The product's order is eq. 3.8's as written: (A_e γ) η_e.
            self.known_j += self.weights_m3[self.known] * eta;
            self.known += 1;
        }
    }

    /// Whether E_s of the elements entered so far exceeds `energy_j`, asking
    /// `density` for pending η in order only until the known part does.
    /// `false` means every η is known and E_s ≤ `energy_j`.
    pub fn exceeds(&mut self, energy_j: f64, density: &mut dyn FnMut(usize) -> f64) -> bool {
        loop {
            if energy_j < self.known_j {
                return true;
            }
            let Some(&element) = self.elements.get(self.known) else {
                return false;
            };
            self.densities_j_m3[self.known] = density(element as usize);
            self.advance();
        }
    }

    /// E_s when every η is known (see [`Self::pending`]).
    pub fn total_j(&self) -> Option<f64> {
        (self.known == self.elements.len()).then_some(self.known_j)
    }

    /// The sum over the elements whose η is known: a lower bound on E_s.
    pub fn known_j(&self) -> f64 {
        self.known_j
    }

    /// The elements whose η is not known yet, in the order entered.
    pub fn pending(&self) -> impl Iterator<Item = usize> + '_ {
        self.elements
            .iter()
            .zip(&self.densities_j_m3)
            .skip(self.known)
            .filter(|(_, eta)| eta.is_nan())
            .map(|(&e, _)| e as usize)
    }

    /// Sets the η of the pending elements, in the order of [`Self::pending`].
    pub fn fill(&mut self, densities_j_m3: &mut impl Iterator<Item = f64>) {
        for eta in self.densities_j_m3[self.known..].iter_mut() {
            if eta.is_nan() {
                *eta = densities_j_m3
                    .next()
                    .expect("one density per pending element");
            }
        }
        self.advance();
    }

    /// Evaluates every pending η with `density`, in order.
    pub fn complete(&mut self, density: &mut dyn FnMut(usize) -> f64) -> f64 {
        self.exceeds(f64::INFINITY, density);
        self.known_j
    }
}

/// The densities the energy stop left pending ([`EnergyLedger::pending`]),
/// evaluated on the rayon pool while the caller goes on propagating:
/// tasks of `LEDGER_TASK_ELEMENTS` elements, one per-node cache per
/// worker thread. The densities are those
/// [`StrainEnergy::density`] gives one at a time; made by
/// [`StrainEnergy::pending_densities`].
pub struct PendingDensities<'a> {
    mesh: &'a TetMesh,
    tables: EnergyTables<'a>,
    stiffness: &'a Matrix6<f64>,
    workers: WorkerLocal<StrainEnergy<'a>>,
    /// Per finished task: its ledger, its place among the ledger's tasks,
    /// and the densities.
    done: Mutex<Vec<(usize, usize, Vec<f64>)>>,
}

impl<'a> PendingDensities<'a> {
    /// Spawns on `scope` the evaluation of `ledger`'s pending densities at
    /// modal state `z` and contact `forces`, released by a crack of unit
    /// `normal` or whole (`None`; [`StrainEnergy::density_for`]);
    /// `index` is the ledger's place in [`Self::fill`].
    pub fn spawn<'s>(
        &'s self,
        scope: &rayon::Scope<'s>,
        index: usize,
        z: &'a [f32],
        forces: &'a [f32],
        normal: Option<Vector3<f64>>,
        ledger: &EnergyLedger,
    ) {
        let pending: Arc<[u32]> = ledger.pending().map(|e| e as u32).collect();
        for (task, start) in (0..pending.len()).step_by(LEDGER_TASK_ELEMENTS).enumerate() {
            let pending = Arc::clone(&pending);
            scope.spawn(move |_| {
                let elements = &pending[start..(start + LEDGER_TASK_ELEMENTS).min(pending.len())];
                let densities = self.workers.with(
                    || StrainEnergy::new(self.mesh, self.tables, self.stiffness),
                    |energy| {
                        energy.set_state(z, forces);
                        elements
                            .iter()
                            .map(|&e| energy.density_for(e as usize, normal.as_ref()))
                            .collect()
                    },
                );
                self.done
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((index, task, densities));
            });
        }
    }

    /// Fills in the densities of every spawned ledger, `ledgers[index]`,
    /// once the scope that ran the tasks has ended.
    pub fn fill(self, ledgers: &mut [EnergyLedger]) {
        let mut done = self
            .done
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        done.sort_unstable_by_key(|&(index, task, _)| (index, task));
        let mut done = done.into_iter().peekable();
        for (index, ledger) in ledgers.iter_mut().enumerate() {
            let mut densities = std::iter::from_fn(|| done.next_if(|&(i, _, _)| i == index))
                .flat_map(|(_, _, densities)| densities);
            ledger.fill(&mut densities);
        }
    }
}
