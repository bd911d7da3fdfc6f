//! Tetrahedral meshes: validation, topology, generators, readers and writers.
//!
//! A [`TetMesh`] is immutable once built: construction validates the input
//! (indices in range, finite coordinates, no duplicate or degenerate tets,
//! every tet positively oriented) and builds the topology once, so every later
//! layer can rely on it without re-checking.

mod error;
mod generate;
mod gmsh;
mod integrals;
mod spec;
mod tetgen;
mod topology;
mod write;

pub use error::MeshError;
pub use generate::{box_mesh, plate_mesh, tile_mesh, Jitter};
pub use gmsh::{read_gmsh, read_gmsh_bytes};
pub use integrals::MassIntegrals;
pub use spec::MeshSpec;
pub use tetgen::{read_tetgen, read_tetgen_strs};
pub use topology::{BoundaryFace, Topology, NO_NEIGHBOUR, TET_EDGES, TET_FACES};
pub use write::{write_obj, write_ply, write_vtk, CellField, NodeField};

use nalgebra::{Point3, Vector3};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::OnceLock;

/// A validated tetrahedral mesh with its topology.
#[derive(Debug, Clone)]
pub struct TetMesh {
    nodes: Vec<Point3<f64>>,
    tets: Vec<[u32; 4]>,
    topology: Topology,
    /// Per tet, built on first use (fragment meshing sums them).
    tet_integrals: OnceLock<Vec<MassIntegrals>>,
}

/// Relative threshold below which a tet counts as degenerate: `6V / l_max³`,
/// which is `1/√2 ≈ 0.7` for a regular tet and 0 for a flat one.
const DEGENERATE_SHAPE_RATIO: f64 = 1e-10;

impl TetMesh {
    /// Validates `nodes` and `tets` and builds the topology.
    ///
    /// Negatively oriented tets are reoriented (two nodes swapped); a tet with
    /// a repeated node or (near) zero volume is rejected with its index.
    pub fn new(nodes: Vec<Point3<f64>>, mut tets: Vec<[u32; 4]>) -> Result<Self, MeshError> {
        if tets.is_empty() {
            return Err(MeshError::Empty);
        }
        if nodes.len() > u32::MAX as usize - 1 {
            return Err(MeshError::TooLarge { nodes: nodes.len() });
        }
        for (node, p) in nodes.iter().enumerate() {
            if !p.coords.iter().all(|c| c.is_finite()) {
                return Err(MeshError::NonFiniteCoordinate { node });
            }
        }
        let mut seen: HashMap<[u32; 4], usize> = HashMap::with_capacity(tets.len());
        for (tet, t) in tets.iter_mut().enumerate() {
            for &index in t.iter() {
                if index as usize >= nodes.len() {
                    return Err(MeshError::NodeIndexOutOfRange {
                        tet,
                        index: index as usize,
                        nodes: nodes.len(),
                    });
                }
            }
            let mut key = *t;
            key.sort_unstable();
            if key.windows(2).any(|w| w[0] == w[1]) {
                return Err(MeshError::DegenerateTet { tet, volume: 0.0 });
            }
            if let Some(first) = seen.insert(key, tet) {
                return Err(MeshError::DuplicateTet { tet, first });
            }
            let p = t.map(|i| nodes[i as usize]);
            let volume = signed_volume(&p);
            let longest = TET_EDGES
                .iter()
                .map(|&[a, b]| (p[a] - p[b]).norm())
                .fold(0.0, f64::max);
            let thick_enough = volume.abs() > DEGENERATE_SHAPE_RATIO * longest.powi(3) / 6.0;
            if !thick_enough {
                return Err(MeshError::DegenerateTet { tet, volume });
            }
            if volume < 0.0 {
                t.swap(2, 3);
            }
        }
        let topology = Topology::build(nodes.len(), &tets)?;
        Ok(Self {
            nodes,
            tets,
            topology,
            tet_integrals: OnceLock::new(),
        })
    }

    /// Node positions (metres).
    pub fn nodes(&self) -> &[Point3<f64>] {
        &self.nodes
    }

    /// Tets as four node indices, positively oriented.
    pub fn tets(&self) -> &[[u32; 4]] {
        &self.tets
    }

    /// Edges, face neighbours, node adjacency and boundary faces.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Number of tets.
    pub fn tet_count(&self) -> usize {
        self.tets.len()
    }

    /// The four corner positions of tet `t`.
    pub fn tet_points(&self, t: usize) -> [Point3<f64>; 4] {
        self.tets[t].map(|i| self.nodes[i as usize])
    }

    /// The mass integrals of every tet, computed once (in parallel) on
    /// first use: the same values as [`MassIntegrals::tet`] of its points.
    pub fn tet_integrals(&self) -> &[MassIntegrals] {
        self.tet_integrals.get_or_init(|| {
            (0..self.tets.len())
                .into_par_iter()
                .with_min_len(1024)
                .map(|t| MassIntegrals::tet(self.tet_points(t)))
                .collect()
        })
    }

    /// Volume of tet `t` (m³), positive.
    pub fn tet_volume(&self, t: usize) -> f64 {
        signed_volume(&self.tet_points(t))
    }

    /// Centroid of tet `t`.
    pub fn tet_centroid(&self, t: usize) -> Point3<f64> {
        let p = self.tet_points(t);
        Point3::from((p[0].coords + p[1].coords + p[2].coords + p[3].coords) / 4.0)
    }

    /// Mean length of the mesh's edges (m): its resolution.
    pub fn mean_edge_length(&self) -> f64 {
        let edges = &self.topology.edges;
        let total: f64 = edges
            .iter()
            .map(|&[a, b]| (self.nodes[b as usize] - self.nodes[a as usize]).norm())
            .sum();
        total / edges.len().max(1) as f64
    }

    /// Total volume (m³).
    pub fn volume(&self) -> f64 {
        (0..self.tets.len()).map(|t| self.tet_volume(t)).sum()
    }

    /// Axis-aligned bounds `(min, max)`.
    pub fn bounds(&self) -> (Point3<f64>, Point3<f64>) {
        let mut lo = Point3::from(Vector3::repeat(f64::INFINITY));
        let mut hi = Point3::from(Vector3::repeat(f64::NEG_INFINITY));
        for p in &self.nodes {
            lo = lo.inf(p);
            hi = hi.sup(p);
        }
        (lo, hi)
    }

    /// A stable 128-bit content hash of node coordinates and tets, for caches.
    pub fn content_hash(&self) -> u128 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(&(self.nodes.len() as u64).to_le_bytes());
        for p in &self.nodes {
            for c in p.coords.iter() {
                h.update(&c.to_le_bytes());
            }
        }
        h.update(&(self.tets.len() as u64).to_le_bytes());
        for t in &self.tets {
            for i in t {
                h.update(&i.to_le_bytes());
            }
        }
        h.digest128()
    }
}

/// Signed volume of the tet `p`: positive when `(p1−p0, p2−p0, p3−p0)` is a
/// right-handed frame.
pub fn signed_volume(p: &[Point3<f64>; 4]) -> f64 {
    (p[1] - p[0]).dot(&(p[2] - p[0]).cross(&(p[3] - p[0]))) / 6.0
}
