//! The fracture state of one body (Glondu 2012 §3.1.1): damaged elements,
//! cut edges with their cut positions, and a fragment identifier per node.

use crate::mesh::TetMesh;
use std::collections::VecDeque;

/// Marks an edge that no crack has cut.
const UNCUT: f64 = f64::NAN;

/// Damage, cuts and fragments of one body, on its tet mesh.
#[derive(Debug, Clone)]
pub struct FractureState {
    /// Per tet: crossed by a crack (§3.1.1.1).
    damaged: Vec<bool>,
    /// Per edge: where a crack cuts it, as a fraction from `edges[e][0]` to
    /// `edges[e][1]`; NaN when uncut (§3.1.1.2). f64: fragment volumes and
    /// inertia are computed from these points.
    cut_position: Vec<f64>,
    /// Per node: the fragment it belongs to (§3.1.1.3).
    node_fragment: Vec<u32>,
    fragment_count: u32,
}

impl FractureState {
    /// The intact state: nothing damaged, nothing cut, one fragment.
    pub fn new(mesh: &TetMesh) -> Self {
        Self {
            damaged: vec![false; mesh.tet_count()],
            cut_position: vec![UNCUT; mesh.topology().edges.len()],
            node_fragment: vec![0; mesh.node_count()],
            fragment_count: 1,
        }
    }

    pub fn is_damaged(&self, tet: usize) -> bool {
        self.damaged[tet]
    }

    pub(crate) fn set_damaged(&mut self, tet: usize) {
        self.damaged[tet] = true;
    }

    pub fn damaged_count(&self) -> usize {
        self.damaged.iter().filter(|&&d| d).count()
    }

    /// Where edge `edge` is cut (fraction from its first node), if it is.
    pub fn cut_position(&self, edge: usize) -> Option<f64> {
        let t = self.cut_position[edge];
        (!t.is_nan()).then_some(t)
    }

    /// Cuts `edge` at `position`; an edge already cut keeps its first cut.
    /// Returns whether the edge was newly cut.
    pub(crate) fn cut(&mut self, edge: usize, position: f64) -> bool {
        if self.cut_position[edge].is_nan() {
            self.cut_position[edge] = position.clamp(0.0, 1.0);
            true
        } else {
            false
        }
    }

    /// Cuts edges directly (each `(edge, position)`, position as in
    /// [`Self::cut_position`]), marks the tets around them damaged, and
    /// updates the fragments; for pre-scored bodies and tests. Returns the new
    /// fragment identifiers.
    pub fn cut_edges(&mut self, mesh: &TetMesh, cuts: &[(usize, f64)]) -> Vec<u32> {
        let topo = mesh.topology();
        let mut seeds = Vec::new();
        for &(edge, position) in cuts {
            if self.cut(edge, position) {
                seeds.extend(topo.edges[edge]);
            }
        }
        for (t, edges) in topo.tet_edges.iter().enumerate() {
            if edges
                .iter()
                .any(|&e| self.cut_position(e as usize).is_some())
            {
                self.damaged[t] = true;
            }
        }
        self.split_fragments(mesh, &seeds)
    }

    pub fn cut_edge_count(&self) -> usize {
        self.cut_position.iter().filter(|t| !t.is_nan()).count()
    }

    /// The fragment identifier of each node.
    pub fn node_fragments(&self) -> &[u32] {
        &self.node_fragment
    }

    /// Fragment identifiers are `0..fragment_id_bound()`; some may be unused
    /// after splits.
    pub fn fragment_id_bound(&self) -> u32 {
        self.fragment_count
    }

    /// Re-labels the fragments containing `seeds` after new cuts, by flood
    /// fill over uncut edges (Glondu Alg. 1). `seeds` must hold both ends of
    /// every newly cut edge. Only the fragments the seeds belong to are
    /// visited (the cost is linear in their node count); the largest piece of
    /// each keeps its old identifier, the others get new ones. Returns the
    /// new identifiers.
    pub(crate) fn split_fragments(&mut self, mesh: &TetMesh, seeds: &[u32]) -> Vec<u32> {
        let topo = mesh.topology();
        let mut created = Vec::new();
        let mut affected: Vec<u32> = seeds
            .iter()
            .map(|&n| self.node_fragment[n as usize])
            .collect();
        affected.sort_unstable();
        affected.dedup();
        // Temporary labels above every real identifier mark visited nodes.
        let mut queue = VecDeque::new();
        for fragment in affected {
            let mut components: Vec<(u32, Vec<u32>)> = Vec::new();
            for &seed in seeds {
                if self.node_fragment[seed as usize] != fragment {
                    continue;
                }
                let label = u32::MAX - components.len() as u32;
                let mut members = vec![seed];
                self.node_fragment[seed as usize] = label;
                queue.push_back(seed);
                while let Some(n) = queue.pop_front() {
                    let range = topo.node_offsets[n as usize] as usize
                        ..topo.node_offsets[n as usize + 1] as usize;
                    for k in range {
                        let m = topo.node_neighbours[k];
                        if self.node_fragment[m as usize] == fragment
                            && self.cut_position[topo.node_neighbour_edges[k] as usize].is_nan()
                        {
                            self.node_fragment[m as usize] = label;
                            members.push(m);
                            queue.push_back(m);
                        }
                    }
                }
                components.push((label, members));
            }
            // Every node of `fragment` is reached: a path from it to a seed
            // in the old graph is uncut up to its first cut edge, whose
            // endpoints are seeds. The largest piece keeps the identifier.
            let keep = components
                .iter()
                .enumerate()
                .max_by_key(|(_, (_, m))| m.len())
                .map(|(i, _)| i);
            for (i, (_, members)) in components.iter().enumerate() {
                let id = if Some(i) == keep {
                    fragment
                } else {
                    let id = self.fragment_count;
                    self.fragment_count += 1;
                    created.push(id);
                    id
                };
                for &m in members {
                    self.node_fragment[m as usize] = id;
                }
            }
        }
        created
    }
}
