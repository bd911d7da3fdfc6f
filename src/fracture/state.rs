//! The fracture state of one body (Glondu 2012 §3.1.1): damaged elements,
//! cut edges with their cut positions, and a fragment identifier per node.

use crate::mesh::{TetMesh, Topology};

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
    /// The cut edges as bits: the flood fill tests an edge per neighbour,
    /// and this fits in cache where `cut_position` does not.
    cut_bits: Vec<u64>,
    /// Per node: the fragment it belongs to (§3.1.1.3).
    node_fragment: Vec<u32>,
    /// Per fragment identifier: how many nodes it has.
    fragment_nodes: Vec<u32>,
    fragment_count: u32,
}

impl FractureState {
    /// Bytes held: damage per tet, cuts per edge, fragments per node.
    pub fn bytes(&self) -> usize {
        self.damaged.len()
            + self.cut_position.len() * std::mem::size_of::<f64>()
            + self.cut_bits.len() * std::mem::size_of::<u64>()
            + (self.node_fragment.len() + self.fragment_nodes.len()) * std::mem::size_of::<u32>()
    }

    /// The intact state: nothing damaged, nothing cut, one fragment.
    pub fn new(mesh: &TetMesh) -> Self {
        Self {
            damaged: vec![false; mesh.tet_count()],
            cut_position: vec![UNCUT; mesh.topology().edges.len()],
            cut_bits: vec![0; mesh.topology().edges.len().div_ceil(64)],
            node_fragment: vec![0; mesh.node_count()],
            fragment_nodes: vec![mesh.node_count() as u32],
            fragment_count: 1,
        }
    }

    /// Whether tet `tet` is cracked (holds a crack surface).
    pub fn is_damaged(&self, tet: usize) -> bool {
        self.damaged[tet]
    }

    pub(crate) fn set_damaged(&mut self, tet: usize) {
        self.damaged[tet] = true;
    }

    /// How many tets are damaged.
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
            self.cut_bits[edge / 64] |= 1 << (edge % 64);
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

    /// How many edges are cut.
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
    /// every newly cut edge. Returns the new identifiers.
    ///
    /// A fragment with many seeds for its size (a shattering event, whose
    /// floods reach nearly every node whatever the order) is swept piece by
    /// piece ([`Self::sweep_fragment`]); the others are searched as follows.
    /// One breadth-first search starts at every seed and the searches of a
    /// fragment advance in turn, one node each, merging where they meet.
    /// A search that runs out of nodes has closed a piece; once a single
    /// search of the fragment is still open, the rest of the fragment is
    /// its piece and need not be visited. The cost is thus the size of the
    /// smaller pieces times the number of pieces, not the fragment's size:
    /// a crack that splits off a chip from a large body visits the chip.
    /// The open (largest) piece keeps the old identifier, the others get
    /// new ones; if every search closes, the largest piece keeps it.
    pub(crate) fn split_fragments(&mut self, mesh: &TetMesh, seeds: &[u32]) -> Vec<u32> {
        // Ascending and distinct through a node bitmap: a shattering event
        // has a hundred thousand seeds, which sorting took a fifth of this
        // function to order.
        let mut marked = vec![0u64; self.node_fragment.len().div_ceil(64)];
        for &n in seeds {
            marked[n as usize / 64] |= 1 << (n % 64);
        }
        let seeds: Vec<u32> = set_bits(&marked).collect();
        // Temporary labels (above every real identifier) mark visited nodes:
        // label u32::MAX − i belongs to search i.
        assert!(
            (self.fragment_count as u64) + (seeds.len() as u64) < u32::MAX as u64,
            "fragment labels exhausted"
        );
        let mut by_fragment: Vec<(u32, u32)> = seeds
            .iter()
            .map(|&n| (self.node_fragment[n as usize], n))
            .collect();
        // Stable: each fragment's seeds stay ascending.
        by_fragment.sort_by_key(|&(fragment, _)| fragment);
        let mut created = Vec::new();
        for group in by_fragment.chunk_by(|a, b| a.0 == b.0) {
            let fragment = group[0].0;
            let seeds: Vec<u32> = group.iter().map(|&(_, n)| n).collect();
            if seeds.len() * SWEEP_SEED_RATIO >= self.fragment_nodes[fragment as usize] as usize {
                self.sweep_fragment(mesh, fragment, &seeds, &mut created);
            } else {
                self.split_fragment(mesh, fragment, &seeds, &mut created);
            }
        }
        debug_assert!(
            self.node_fragment.iter().fold(
                vec![0u32; self.fragment_nodes.len()],
                |mut counts, &id| {
                    counts[id as usize] += 1;
                    counts
                }
            ) == self.fragment_nodes,
            "node counts per fragment"
        );
        created
    }

    fn split_fragment(
        &mut self,
        mesh: &TetMesh,
        fragment: u32,
        seeds: &[u32],
        created: &mut Vec<u32>,
    ) {
        let topo = mesh.topology();
        let label = |i: usize| u32::MAX - i as u32;
        let search_of = |label: u32| (u32::MAX - label) as usize;
        // The searches' queues are linked lists through `next` (a node is
        // queued at most once, when it is labelled): no allocation per seed,
        // and merging two searches joins their queues in O(1).
        let mut next = vec![NONE; mesh.node_count()];
        let mut searches: Vec<Search> = seeds
            .iter()
            .enumerate()
            .map(|(i, &seed)| {
                self.node_fragment[seed as usize] = label(i);
                Search {
                    parent: i,
                    rank: 0,
                    head: seed,
                    tail: seed,
                }
            })
            .collect();
        let mut visited: Vec<u32> = seeds.to_vec();
        let mut open: Vec<usize> = (0..searches.len()).collect();
        while open.len() > 1 {
            let mut i = 0;
            while i < open.len() && open.len() > 1 {
                let s = open[i];
                if searches[s].parent != s {
                    // Merged into another search since this round began.
                    open.swap_remove(i);
                    continue;
                }
                // A turn takes up to TURN_NODES nodes: the frontier of one
                // search is near in memory, the frontiers of thousands of
                // seeds are not.
                let mut root = s;
                let mut taken = 0;
                while taken < TURN_NODES {
                    let Some(n) = searches[root].pop(&next) else {
                        break;
                    };
                    taken += 1;
                    for m in uncut_neighbours(topo, &self.cut_bits, n) {
                        let at = self.node_fragment[m as usize];
                        if at == fragment {
                            self.node_fragment[m as usize] = label(root);
                            visited.push(m);
                            searches[root].push(m, &mut next);
                        } else if at >= self.fragment_count {
                            let other = find(&mut searches, search_of(at));
                            if other != root {
                                // The search may be merged on the way; its
                                // finds go to the merged root's queue.
                                root = merge(&mut searches, root, other, &mut next);
                            }
                        }
                    }
                }
                if taken == 0 {
                    open.swap_remove(i);
                    continue;
                }
                i += 1;
            }
        }
        // A search still holding nodes is the open piece: every other piece
        // is closed (a closed search has taken or met every node next to
        // its own, so none can meet it later).
        let unfinished =
            (0..searches.len()).find(|&s| searches[s].parent == s && searches[s].head != NONE);
        // Else every piece closed: the largest keeps the identifier (ties:
        // the earliest seed, for determinism).
        let keep = unfinished.unwrap_or_else(|| {
            let mut size = vec![0usize; searches.len()];
            for &n in &visited {
                size[find(&mut searches, search_of(self.node_fragment[n as usize]))] += 1;
            }
            (0..searches.len())
                .filter(|&s| searches[s].parent == s)
                .max_by(|&a, &b| size[a].cmp(&size[b]).then(b.cmp(&a)))
                .unwrap_or(0)
        });
        let mut id_of = vec![fragment; searches.len()];
        for root in 0..searches.len() {
            if searches[root].parent == root && root != keep {
                id_of[root] = self.new_fragment(created);
            }
        }
        for &n in &visited {
            let root = find(&mut searches, search_of(self.node_fragment[n as usize]));
            let id = id_of[root];
            self.node_fragment[n as usize] = id;
            self.move_node(fragment, id);
        }
    }

    /// [`Self::split_fragment`] for a fragment whose floods would reach
    /// nearly all of it anyway: one breadth-first search per piece, from
    /// its first seed in order, so every node is visited once and no
    /// searches meet. The largest piece keeps the identifier (ties: the
    /// earliest), the others get new ones in order. Every piece holds a
    /// seed: the fragment was connected through the edges just cut.
    fn sweep_fragment(
        &mut self,
        mesh: &TetMesh,
        fragment: u32,
        seeds: &[u32],
        created: &mut Vec<u32>,
    ) {
        let topo = mesh.topology();
        // Visited nodes, piece after piece; `piece_ends[i]` ends piece i.
        // Sized for the whole fragment plus one slot that a neighbour not
        // taken may be written to: the sweep appends without branching,
        // as whether an edge is cut and whether its node is taken follow
        // no pattern a branch predictor can learn.
        let mut visited = vec![0u32; self.fragment_nodes[fragment as usize] as usize + 1];
        let mut len = 0;
        let mut piece_ends: Vec<usize> = Vec::new();
        for &seed in seeds {
            if self.node_fragment[seed as usize] != fragment {
                continue;
            }
            let label = u32::MAX - piece_ends.len() as u32;
            self.node_fragment[seed as usize] = label;
            let mut head = len;
            visited[len] = seed;
            len += 1;
            while head < len {
                let n = visited[head] as usize;
                head += 1;
                let range = topo.node_offsets[n] as usize..topo.node_offsets[n + 1] as usize;
                for k in range {
                    let edge = topo.node_neighbour_edges[k] as usize;
                    let m = topo.node_neighbours[k];
                    let at = &mut self.node_fragment[m as usize];
                    let take =
                        ((self.cut_bits[edge / 64] >> (edge % 64)) & 1 == 0) & (*at == fragment);
                    *at = if take { label } else { *at };
                    visited[len] = m;
                    len += usize::from(take);
                }
            }
            piece_ends.push(len);
        }
        let sizes: Vec<usize> = (0..piece_ends.len())
            .map(|i| piece_ends[i] - if i == 0 { 0 } else { piece_ends[i - 1] })
            .collect();
        let keep = (0..sizes.len())
            .max_by(|&a, &b| sizes[a].cmp(&sizes[b]).then(b.cmp(&a)))
            .unwrap_or(0);
        let mut start = 0;
        for (piece, &end) in piece_ends.iter().enumerate() {
            let id = if piece == keep {
                fragment
            } else {
                self.new_fragment(created)
            };
            for &n in &visited[start..end] {
                self.node_fragment[n as usize] = id;
                self.move_node(fragment, id);
            }
            start = end;
        }
    }

    /// A new, empty fragment identifier.
    fn new_fragment(&mut self, created: &mut Vec<u32>) -> u32 {
        let id = self.fragment_count;
        created.push(id);
        self.fragment_nodes.push(0);
        self.fragment_count += 1;
        id
    }

    fn move_node(&mut self, from: u32, to: u32) {
        self.fragment_nodes[from as usize] -= 1;
        self.fragment_nodes[to as usize] += 1;
    }
}

/// The positions of the set bits of `words`, ascending.
fn set_bits(words: &[u64]) -> impl Iterator<Item = u32> + '_ {
    words.iter().enumerate().flat_map(|(w, &word)| {
        let mut rest = word;
        std::iter::from_fn(move || {
            (rest != 0).then(|| {
                let bit = rest.trailing_zeros();
                rest &= rest - 1;
                64 * w as u32 + bit
            })
        })
    })
}

/// The neighbours of node `n` across edges not set in `cut_bits`.
fn uncut_neighbours<'a>(
    topo: &'a Topology,
    cut_bits: &'a [u64],
    n: u32,
) -> impl Iterator<Item = u32> + 'a {
    let range = topo.node_offsets[n as usize] as usize..topo.node_offsets[n as usize + 1] as usize;
    range.filter_map(move |k| {
        let edge = topo.node_neighbour_edges[k] as usize;
        (cut_bits[edge / 64] & (1 << (edge % 64)) == 0).then_some(topo.node_neighbours[k])
    })
}

/// A fragment with at least one seed per this many of its nodes is swept
/// ([`FractureState::sweep_fragment`]) rather than searched.
const SWEEP_SEED_RATIO: usize = 16;

/// Nodes one search takes per turn of [`FractureState::split_fragments`].
const TURN_NODES: usize = 32;

/// Marks the end of a search's queue.
const NONE: u32 = u32::MAX;

/// One breadth-first search of [`FractureState::split_fragments`];
/// searches that met form a union-find tree whose root holds the queue,
/// a list from `head` to `tail` linked through the nodes' `next`.
struct Search {
    parent: usize,
    /// Union by rank keeps the trees shallow: a node keeps the label of
    /// the search that found it, so every meeting is a find.
    rank: u8,
    head: u32,
    tail: u32,
}

impl Search {
    fn pop(&mut self, next: &[u32]) -> Option<u32> {
        let n = self.head;
        if n == NONE {
            return None;
        }
        self.head = next[n as usize];
        Some(n)
    }

    fn push(&mut self, n: u32, next: &mut [u32]) {
        next[n as usize] = NONE;
        if self.head == NONE {
            self.head = n;
        } else {
            next[self.tail as usize] = n;
        }
        self.tail = n;
    }
}

fn find(searches: &mut [Search], mut s: usize) -> usize {
    while searches[s].parent != s {
        let grandparent = searches[searches[s].parent].parent;
        searches[s].parent = grandparent;
        s = grandparent;
    }
    s
}

/// Merges the trees of roots `a` and `b` (union by rank); the merged
/// queue is `a`'s followed by `b`'s. Returns the merged root.
fn merge(searches: &mut [Search], a: usize, b: usize, next: &mut [u32]) -> usize {
    let (a_head, a_tail) = (searches[a].head, searches[a].tail);
    let (b_head, b_tail) = (searches[b].head, searches[b].tail);
    let (head, tail) = if a_head == NONE {
        (b_head, b_tail)
    } else if b_head == NONE {
        (a_head, a_tail)
    } else {
        next[a_tail as usize] = b_head;
        (a_head, b_tail)
    };
    let (root, child) = if searches[a].rank >= searches[b].rank {
        (a, b)
    } else {
        (b, a)
    };
    if searches[root].rank == searches[child].rank {
        searches[root].rank += 1;
    }
    searches[child].parent = root;
    searches[child].head = NONE;
    searches[root].head = head;
    searches[root].tail = tail;
    root
}
