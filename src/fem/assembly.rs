//! The elastic discretisation of a tet mesh ([`ElasticMesh`]) and the
//! sparse assembly of its K and M. The pattern comes from the elements'
//! node lists (3×3 blocks per node pair), so assembly is a scatter into a
//! preallocated CSC matrix: no triplets, no sort.

use super::element::{element_stiffness, TetElement};
use super::quadratic::{quadratic_element_stiffness, HRZ_MASS_FRACTIONS, TET10_NODES};
use super::SparseMatrix;
use crate::config::Material;
use crate::mesh::TetMesh;
use faer::sparse::{SparseColMat, SymbolicSparseColMat};
use nalgebra::{Matrix3, Point3};
use serde::{Deserialize, Serialize};

/// The element that carries a body's elasticity (its K, M, modes and
/// stresses). The linear tets of the mesh stay the crack geometry either
/// way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ElementOrder {
    /// 4-node linear tets: constant strain, so they lock in bending (a
    /// plate two elements thick is far too stiff); for comparisons and
    /// speed.
    Linear,
    /// 10-node quadratic tets ([`quadratic_element_stiffness`](super::quadratic_element_stiffness)):
    /// bending converges with one or two elements through a plate's
    /// thickness.
    #[default]
    Quadratic,
}

impl ElementOrder {
    /// Nodes per element: 4 or 10.
    pub fn nodes_per_element(self) -> usize {
        match self {
            Self::Linear => 4,
            Self::Quadratic => TET10_NODES,
        }
    }

    /// Nodes of the elasticity on `mesh`: its own, and (quadratic) one per
    /// edge.
    pub fn node_count(self, mesh: &TetMesh) -> usize {
        match self {
            Self::Linear => mesh.node_count(),
            Self::Quadratic => mesh.node_count() + mesh.topology().edges.len(),
        }
    }

    /// `"linear"` or `"quadratic"`, as in scene files.
    pub fn name(self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::Quadratic => "quadratic",
        }
    }
}

impl std::str::FromStr for ElementOrder {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "linear" => Ok(Self::Linear),
            "quadratic" => Ok(Self::Quadratic),
            other => Err(format!(
                "unknown element `{other}` (expected `linear` or `quadratic`)"
            )),
        }
    }
}

/// A tet mesh's nodes and elements for the elasticity: the mesh's nodes
/// (the corners) first, in the mesh's order, then for quadratic elements
/// one node at the midpoint of each edge, in the order of
/// [`Topology::edges`](crate::mesh::Topology::edges). DOF `3n + axis` is
/// node n's displacement along `axis`, so the first `3 · corner_count()`
/// DOFs of a vector on this mesh are the mesh nodes' displacements.
#[derive(Debug, Clone)]
pub struct ElasticMesh {
    order: ElementOrder,
    nodes: Vec<Point3<f64>>,
    corners: usize,
    /// The nodes of each element, [`ElementOrder::nodes_per_element`] each:
    /// the tet's corners, then (quadratic) its edges' nodes in
    /// [`TET_EDGES`](crate::mesh::TET_EDGES) order.
    element_nodes: Vec<u32>,
}

impl ElasticMesh {
    /// The elements of `order` on `mesh`.
    pub fn new(mesh: &TetMesh, order: ElementOrder) -> Self {
        let corners = mesh.node_count();
        let mut nodes = mesh.nodes().to_vec();
        let per = order.nodes_per_element();
        let mut element_nodes = Vec::with_capacity(per * mesh.tet_count());
        match order {
            ElementOrder::Linear => element_nodes.extend(mesh.tets().iter().flatten()),
            ElementOrder::Quadratic => {
                let topology = mesh.topology();
                let corner_nodes = mesh.nodes();
                nodes.extend(topology.edges.iter().map(|&[a, b]| {
                    Point3::from(
                        (corner_nodes[a as usize].coords + corner_nodes[b as usize].coords) / 2.0,
                    )
                }));
                for (tet, edges) in mesh.tets().iter().zip(&topology.tet_edges) {
                    element_nodes.extend_from_slice(tet);
                    element_nodes.extend(edges.iter().map(|&e| corners as u32 + e));
                }
            }
        }
        Self {
            order,
            nodes,
            corners,
            element_nodes,
        }
    }

    /// The element.
    pub fn order(&self) -> ElementOrder {
        self.order
    }

    /// All nodes: corners, then edge nodes.
    pub fn nodes(&self) -> &[Point3<f64>] {
        &self.nodes
    }

    /// Nodes of the elasticity (corners and edge nodes).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The mesh's own nodes, numbered first.
    pub fn corner_count(&self) -> usize {
        self.corners
    }

    /// Degrees of freedom: three per node.
    pub fn dofs(&self) -> usize {
        3 * self.nodes.len()
    }

    /// Number of elements (the mesh's tets).
    pub fn element_count(&self) -> usize {
        self.element_nodes.len() / self.order.nodes_per_element()
    }

    /// The nodes of element `t` (4 or 10).
    pub fn element_nodes(&self, t: usize) -> &[u32] {
        let per = self.order.nodes_per_element();
        &self.element_nodes[per * t..per * (t + 1)]
    }

    /// The linear geometry of element `t` (volume, ∇L).
    pub fn element(&self, t: usize) -> TetElement {
        let corners = &self.element_nodes(t)[..4];
        TetElement::new(&std::array::from_fn(|i| self.nodes[corners[i] as usize]))
            .expect("validated mesh has no degenerate tet")
    }

    /// The global stiffness matrix K (N/m), full symmetric storage.
    pub fn stiffness(&self, material: &Material) -> SparseMatrix {
        let pattern = DofPattern::new(self);
        let (lambda, mu) = material.lame();
        let mut values = vec![0.0; pattern.nnz()];
        for t in 0..self.element_count() {
            let element = self.element(t);
            let nodes = self.element_nodes(t);
            let mut scatter = |blocks: &[&[Matrix3<f64>]]| {
                for (a, row) in blocks.iter().enumerate() {
                    for (b, block) in row.iter().enumerate() {
                        pattern.add_block(&mut values, nodes[a], nodes[b], block);
                    }
                }
            };
            match self.order {
                ElementOrder::Linear => {
                    let k = element_stiffness(&element, lambda, mu);
                    scatter(&k.each_ref().map(|row| &row[..]));
                }
                ElementOrder::Quadratic => {
                    let k = quadratic_element_stiffness(&element, lambda, mu);
                    scatter(&k.each_ref().map(|row| &row[..]));
                }
            }
        }
        pattern.to_matrix(values)
    }

    /// The lumped mass per DOF (kg): ρV/4 per corner of a linear tet; the
    /// HRZ fractions ([`HRZ_MASS_FRACTIONS`]) of a quadratic one. Diagonal,
    /// so the eigensolver's `M^½` is too.
    pub fn lumped_mass(&self, density_kg_m3: f64) -> Vec<f64> {
        let mut mass = vec![0.0; self.dofs()];
        for t in 0..self.element_count() {
            let element_mass = density_kg_m3 * self.element(t).volume;
            for (a, &n) in self.element_nodes(t).iter().enumerate() {
                let fraction = match self.order {
                    ElementOrder::Linear => 0.25,
                    ElementOrder::Quadratic => HRZ_MASS_FRACTIONS[a],
                };
                for axis in 0..3 {
                    mass[3 * n as usize + axis] += fraction * element_mass;
                }
            }
        }
        mass
    }
}

/// The CSC sparsity of a 3-DOF-per-node operator on an [`ElasticMesh`],
/// with the lookup from a node pair to its 3×3 block.
#[derive(Debug, Clone)]
struct DofPattern {
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// Per node, its sorted neighbour list including itself.
    block_offsets: Vec<usize>,
    block_rows: Vec<u32>,
}

impl DofPattern {
    /// One 3×3 block per pair of nodes sharing an element.
    fn new(elastic: &ElasticMesh) -> Self {
        let n = elastic.node_count();
        let per = elastic.order.nodes_per_element();
        // Elements of each node, in compressed rows.
        let mut incidence_offsets = vec![0usize; n + 1];
        for &node in &elastic.element_nodes {
            incidence_offsets[node as usize + 1] += 1;
        }
        for i in 0..n {
            incidence_offsets[i + 1] += incidence_offsets[i];
        }
        let mut cursor = incidence_offsets.clone();
        let mut incidence = vec![0u32; elastic.element_nodes.len()];
        for (slot, &node) in elastic.element_nodes.iter().enumerate() {
            incidence[cursor[node as usize]] = (slot / per) as u32;
            cursor[node as usize] += 1;
        }
        let mut block_offsets = Vec::with_capacity(n + 1);
        let mut block_rows = Vec::new();
        block_offsets.push(0);
        let mut row = Vec::new();
        for node in 0..n {
            row.clear();
            for &t in &incidence[incidence_offsets[node]..incidence_offsets[node + 1]] {
                row.extend_from_slice(elastic.element_nodes(t as usize));
            }
            row.sort_unstable();
            row.dedup();
            block_rows.extend_from_slice(&row);
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

    fn dofs(&self) -> usize {
        self.col_ptr.len() - 1
    }

    fn nnz(&self) -> usize {
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
