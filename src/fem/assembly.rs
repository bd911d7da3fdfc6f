//! Sparse assembly of K and M. The pattern comes from the mesh's node
//! adjacency (3×3 blocks per node pair), so assembly is a scatter into a
//! preallocated CSC matrix: no triplets, no sort.

use super::element::{element_stiffness, TetElement};
use super::SparseMatrix;
use crate::config::Material;
use crate::mesh::TetMesh;
use faer::sparse::{SparseColMat, SymbolicSparseColMat};
use nalgebra::Matrix3;

/// The CSC sparsity of a 3-DOF-per-node operator on a mesh, with the lookup
/// from a node pair to its 3×3 block.
#[derive(Debug, Clone)]
pub struct DofPattern {
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// Per node, its sorted neighbour list including itself.
    block_offsets: Vec<usize>,
    block_rows: Vec<u32>,
}

impl DofPattern {
    /// The block pattern of `mesh`'s stiffness matrix: one 3×3 block per pair of nodes sharing a tet.
    pub fn new(mesh: &TetMesh) -> Self {
        let topo = mesh.topology();
        let n = mesh.node_count();
        let mut block_offsets = Vec::with_capacity(n + 1);
        let mut block_rows = Vec::with_capacity(topo.node_neighbours.len() + n);
        block_offsets.push(0);
        for node in 0..n {
            let neighbours = topo.neighbours_of(node);
            let split = neighbours.partition_point(|&m| (m as usize) < node);
            block_rows.extend_from_slice(&neighbours[..split]);
            block_rows.push(node as u32);
            block_rows.extend_from_slice(&neighbours[split..]);
            block_offsets.push(block_rows.len());
        }
        let mut col_ptr = Vec::with_capacity(3 * n + 1);
        let mut row_idx = Vec::with_capacity(9 * block_rows.len());
        col_ptr.push(0);
        for node in 0..n {
            let rows = &block_rows[block_offsets[node]..block_offsets[node + 1]];
            for _ in 0..3 {
                for &m in rows {
                    row_idx.extend([3 * m as usize, 3 * m as usize + 1, 3 * m as usize + 2]);
                }
                col_ptr.push(row_idx.len());
            }
        }
        Self {
            col_ptr,
            row_idx,
            block_offsets,
            block_rows,
        }
    }

    /// Degrees of freedom: three per node.
    pub fn dofs(&self) -> usize {
        self.col_ptr.len() - 1
    }

    /// Stored entries (scalars).
    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// Adds `block` at rows of node `row`, columns of node `col`.
    #[inline]
    fn add_block(&self, values: &mut [f64], row: u32, col: u32, block: &Matrix3<f64>) {
        let rows = &self.block_rows
            [self.block_offsets[col as usize]..self.block_offsets[col as usize + 1]];
        let k = rows
            .binary_search(&row)
            .expect("node pair of a tet is in the pattern");
        for j in 0..3 {
            let start = self.col_ptr[3 * col as usize + j] + 3 * k;
            for i in 0..3 {
                values[start + i] += block[(i, j)];
            }
        }
    }

    fn to_matrix(&self, values: Vec<f64>) -> SparseMatrix {
        let n = self.dofs();
        // The pattern is sorted and duplicate-free by construction.
        let symbolic = SymbolicSparseColMat::new_checked(
            n,
            n,
            self.col_ptr.clone(),
            None,
            self.row_idx.clone(),
        );
        SparseColMat::new(symbolic, values)
    }
}

/// The global stiffness matrix K (N/m), full symmetric storage.
pub fn assemble_stiffness(
    mesh: &TetMesh,
    pattern: &DofPattern,
    material: &Material,
) -> SparseMatrix {
    let (lambda, mu) = material.lame();
    let mut values = vec![0.0; pattern.nnz()];
    for (t, tet) in mesh.tets().iter().enumerate() {
        let element =
            TetElement::new(&mesh.tet_points(t)).expect("validated mesh has no degenerate tet");
        let k = element_stiffness(&element, lambda, mu);
        for a in 0..4 {
            for b in 0..4 {
                pattern.add_block(&mut values, tet[a], tet[b], &k[a][b]);
            }
        }
    }
    pattern.to_matrix(values)
}

/// The consistent mass matrix (kg): `M_ab = ρV(1 + δ_ab)/20 · I` per tet.
pub fn assemble_consistent_mass(
    mesh: &TetMesh,
    pattern: &DofPattern,
    density_kg_m3: f64,
) -> SparseMatrix {
    let mut values = vec![0.0; pattern.nnz()];
    for (t, tet) in mesh.tets().iter().enumerate() {
        let m = density_kg_m3 * mesh.tet_volume(t) / 20.0;
        for a in 0..4 {
            for b in 0..4 {
                let factor = if a == b { 2.0 * m } else { m };
                pattern.add_block(
                    &mut values,
                    tet[a],
                    tet[b],
                    &Matrix3::from_diagonal_element(factor),
                );
            }
        }
    }
    pattern.to_matrix(values)
}

/// The lumped (row-sum) mass per DOF (kg): each tet gives ρV/4 to each node.
pub fn lumped_mass(mesh: &TetMesh, density_kg_m3: f64) -> Vec<f64> {
    let mut mass = vec![0.0; 3 * mesh.node_count()];
    for (t, tet) in mesh.tets().iter().enumerate() {
        let m = density_kg_m3 * mesh.tet_volume(t) / 4.0;
        for &n in tet {
            for axis in 0..3 {
                mass[3 * n as usize + axis] += m;
            }
        }
    }
    mass
}
