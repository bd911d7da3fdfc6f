//! Mode shapes node by node, for the strain energy of the elements a crack
//! crosses (Glondu 2012 eq. 3.8: η_e from the loading that opened it).

use super::stress::dot;
use faer::Mat;

/// The displacement of every node in every mode, at unit modal coordinate.
///
/// Stored in `f32`, node-major: the 3·m values of one node are contiguous,
/// so the displacement of one node at a modal state is three dot products
/// over one 12·m-byte block. A crack entering an element needs ε_e = B_e u_e
/// from its four nodes (48·m bytes against the 24·m of the element's own
/// modal stresses), but the elements a crack crosses share their nodes,
/// each computed once, so per crossed element this reads about a quarter
/// of the bytes. 40 MB for the 174 960-tet slab (33 275 nodes, 100 modes)
/// against its 420 MB stress table. The column-major `f64` shapes of the
/// basis cannot serve: a node's 3·m values lie in 3·m cache lines.
/// f32 for the same reason as the stress table: η_e enters an energy
/// balance of material constants known to a few percent.
#[derive(Debug, Clone)]
pub struct ModalDisplacement {
    modes: usize,
    /// `values[(3n + c)·m + j]`: component c of node n's displacement in mode j.
    values: Vec<f32>,
}

impl ModalDisplacement {
    /// From the DOFs × m shapes (DOF 3n + c is component c of node n), for
    /// the first `nodes` nodes (a quadratic basis's edge nodes are left
    /// out: the mesh's nodes are its corners).
    pub fn new(shapes: &Mat<f64>, nodes: usize) -> Self {
        let m = shapes.ncols();
        let mut values = vec![0.0f32; 3 * nodes * m];
        for j in 0..m {
            for (dof, &x) in shapes.col(j).iter().take(3 * nodes).enumerate() {
                values[dof * m + j] = x as f32;
            }
        }
        Self { modes: m, values }
    }

    /// Displacement (m) of `node` at modal coordinates `z` (length m).
    pub fn node_displacement(&self, node: usize, z: &[f32]) -> [f32; 3] {
        let m = self.modes;
        let block = &self.values[3 * m * node..3 * m * (node + 1)];
        std::array::from_fn(|c| dot(&block[c * m..(c + 1) * m], z))
    }

    /// Bytes held by the table.
    pub fn bytes(&self) -> usize {
        self.values.len() * std::mem::size_of::<f32>()
    }
}
