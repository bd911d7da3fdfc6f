//! The strain-energy density η_e of the elements a crack enters (Glondu
//! 2012 eq. 3.8), at the modal state that opened the crack.

use crate::fem::{strain_energy_density, TetElement};
use crate::mesh::TetMesh;
use crate::modal::ModalDisplacement;
use nalgebra::{Matrix6, Vector3};

/// η_e = ½ εᵀ C ε with ε_e = B_e u_e from the displacements u of the
/// element's four nodes at one modal state. A node's displacement is
/// computed once per state: the elements a crack crosses share their nodes,
/// so this reads about a quarter of the bytes that the element's own modal
/// stresses would (see [`ModalDisplacement`]).
pub struct StrainEnergy<'a> {
    mesh: &'a TetMesh,
    table: &'a ModalDisplacement,
    stiffness: &'a Matrix6<f64>,
    /// The modal coordinates of the current state, and its stamp (from 1).
    z: &'a [f32],
    state: u32,
    node_state: Vec<u32>,
    node_displacement: Vec<[f32; 3]>,
}

impl<'a> StrainEnergy<'a> {
    /// `stiffness` is the constitutive matrix C of the body's material.
    pub fn new(
        mesh: &'a TetMesh,
        table: &'a ModalDisplacement,
        stiffness: &'a Matrix6<f64>,
    ) -> Self {
        Self {
            mesh,
            table,
            stiffness,
            z: &[],
            state: 0,
            node_state: Vec::new(),
            node_displacement: Vec::new(),
        }
    }

    /// Makes `z` the modal state of the densities that follow.
    pub fn set_state(&mut self, z: &'a [f32]) {
        self.z = z;
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
        if self.node_state.is_empty() {
            self.node_state = vec![0; self.mesh.node_count()];
            self.node_displacement = vec![[0.0; 3]; self.mesh.node_count()];
        }
        let nodes = self.mesh.tets()[element];
        let u = nodes.map(|n| {
            let n = n as usize;
            if self.node_state[n] != self.state {
                self.node_state[n] = self.state;
                self.node_displacement[n] = self.table.node_displacement(n, self.z);
            }
            Vector3::from(self.node_displacement[n].map(f64::from))
        });
        let element = TetElement::new(&self.mesh.tet_points(element)).expect("validated mesh");
        strain_energy_density(&element.strain(&u), self.stiffness)
    }
}
