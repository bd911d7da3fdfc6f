//! Mesh topology, built once per mesh by sorting (no hashing), so its cost is
//! `O(T log T)` and its layout is deterministic.

use super::MeshError;

/// Local node pairs of the six edges of a tet, in the order of
/// [`Topology::tet_edges`].
pub const TET_EDGES: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];

/// Local nodes of the face opposite local node `i`, ordered so that the face
/// normal (right-hand rule) points out of a positively oriented tet.
pub const TET_FACES: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];

/// Marks a face with no neighbouring tet (a boundary face).
pub const NO_NEIGHBOUR: u32 = u32::MAX;

/// A face on the mesh boundary, its nodes ordered so its normal points out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoundaryFace {
    /// The tet the face belongs to.
    pub tet: u32,
    /// The local node the face is opposite to.
    pub opposite: u8,
    /// The face's nodes, counter-clockwise seen from outside.
    pub nodes: [u32; 3],
}

/// Connectivity of a [`super::TetMesh`].
#[derive(Debug, Clone)]
pub struct Topology {
    /// Unique edges, each `[a, b]` with `a < b`, sorted.
    pub edges: Vec<[u32; 2]>,
    /// Per tet, the edge index of each local edge in [`TET_EDGES`] order.
    pub tet_edges: Vec<[u32; 6]>,
    /// Per tet, the tet across the face opposite each local node, or
    /// [`NO_NEIGHBOUR`].
    pub face_neighbours: Vec<[u32; 4]>,
    /// Node adjacency in compressed rows: neighbours of node `n` are
    /// `node_neighbours[node_offsets[n]..node_offsets[n + 1]]`, sorted.
    pub node_offsets: Vec<u32>,
    /// Neighbours of every node, concatenated (see `node_offsets`).
    pub node_neighbours: Vec<u32>,
    /// The edge joining each node to each neighbour, aligned with `node_neighbours`.
    pub node_neighbour_edges: Vec<u32>,
    /// Boundary faces, outward oriented.
    pub boundary_faces: Vec<BoundaryFace>,
}

impl Topology {
    pub(super) fn build(node_count: usize, tets: &[[u32; 4]]) -> Result<Self, MeshError> {
        // Edges: sort all (a, b, tet, local) records, then number the runs.
        let mut records: Vec<(u32, u32, u32, u8)> = Vec::with_capacity(tets.len() * 6);
        for (t, tet) in tets.iter().enumerate() {
            for (local, &[i, j]) in TET_EDGES.iter().enumerate() {
                let (a, b) = (tet[i].min(tet[j]), tet[i].max(tet[j]));
                records.push((a, b, t as u32, local as u8));
            }
        }
        records.sort_unstable();
        let mut edges = Vec::with_capacity(records.len() / 4);
        let mut tet_edges = vec![[0u32; 6]; tets.len()];
        for r in &records {
            if edges.last() != Some(&[r.0, r.1]) {
                edges.push([r.0, r.1]);
            }
            tet_edges[r.2 as usize][r.3 as usize] = (edges.len() - 1) as u32;
        }
        drop(records);

        // Node adjacency from the edges (each edge appears in both rows).
        let mut degree = vec![0u32; node_count + 1];
        for &[a, b] in &edges {
            degree[a as usize + 1] += 1;
            degree[b as usize + 1] += 1;
        }
        let mut node_offsets = degree;
        for n in 0..node_count {
            node_offsets[n + 1] += node_offsets[n];
        }
        // Edges are sorted by (a, b), so row n receives its neighbours m < n
        // (from edges (m, n), in order of m) before those x > n (from edges
        // (n, x), in order of x): every row comes out sorted.
        let mut cursor = node_offsets.clone();
        let mut pairs = vec![(0u32, 0u32); edges.len() * 2];
        for (e, &[a, b]) in edges.iter().enumerate() {
            pairs[cursor[a as usize] as usize] = (b, e as u32);
            cursor[a as usize] += 1;
            pairs[cursor[b as usize] as usize] = (a, e as u32);
            cursor[b as usize] += 1;
        }
        debug_assert!((0..node_count)
            .all(|n| pairs[node_offsets[n] as usize..node_offsets[n + 1] as usize].is_sorted()));
        let node_neighbours = pairs.iter().map(|p| p.0).collect();
        let node_neighbour_edges = pairs.iter().map(|p| p.1).collect();

        // Faces: sorted node triples; equal neighbours in sorted order share a face.
        let mut faces: Vec<([u32; 3], u32, u8)> = Vec::with_capacity(tets.len() * 4);
        for (t, tet) in tets.iter().enumerate() {
            for (opposite, local) in TET_FACES.iter().enumerate() {
                let mut key = local.map(|i| tet[i]);
                key.sort_unstable();
                faces.push((key, t as u32, opposite as u8));
            }
        }
        faces.sort_unstable();
        let mut face_neighbours = vec![[NO_NEIGHBOUR; 4]; tets.len()];
        let mut boundary_faces = Vec::new();
        let mut i = 0;
        while i < faces.len() {
            let mut j = i + 1;
            while j < faces.len() && faces[j].0 == faces[i].0 {
                j += 1;
            }
            match j - i {
                1 => {
                    let (_, t, opposite) = faces[i];
                    let tet = tets[t as usize];
                    boundary_faces.push(BoundaryFace {
                        tet: t,
                        opposite,
                        nodes: TET_FACES[opposite as usize].map(|l| tet[l]),
                    });
                }
                2 => {
                    let (_, t0, o0) = faces[i];
                    let (_, t1, o1) = faces[i + 1];
                    face_neighbours[t0 as usize][o0 as usize] = t1;
                    face_neighbours[t1 as usize][o1 as usize] = t0;
                }
                _ => {
                    return Err(MeshError::NonManifoldFace {
                        nodes: faces[i].0,
                        tets: faces[i..j].iter().map(|f| f.1 as usize).collect(),
                    })
                }
            }
            i = j;
        }
        Ok(Self {
            edges,
            tet_edges,
            face_neighbours,
            node_offsets,
            node_neighbours,
            node_neighbour_edges,
            boundary_faces,
        })
    }

    /// Neighbours of node `n`, sorted.
    pub fn neighbours_of(&self, n: usize) -> &[u32] {
        &self.node_neighbours[self.node_offsets[n] as usize..self.node_offsets[n + 1] as usize]
    }

    /// Index of the edge `{a, b}`, if it exists.
    pub fn edge_index(&self, a: u32, b: u32) -> Option<usize> {
        let key = [a.min(b), a.max(b)];
        self.edges.binary_search(&key).ok()
    }

    /// Nodes on the boundary, sorted and unique.
    pub fn boundary_nodes(&self) -> Vec<u32> {
        let mut nodes: Vec<u32> = self.boundary_faces.iter().flat_map(|f| f.nodes).collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
    }
}
