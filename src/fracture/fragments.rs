//! Fragments from the fracture state (Glondu 2012 §3.1.2): a closed,
//! outward-oriented triangle surface per fragment and exact mass properties.
//!
//! Each tet whose nodes lie in several fragments is split by its cut points.
//! The piece of fragment r depends on how many of the tet's nodes are in r:
//! one (a corner tet at that node), three (the tet less the corner at the
//! fourth node) or two (a wedge, bounded by the crack quad). When three or
//! four fragments meet in one tet the pieces leave a gap in its centre
//! (Glondu Fig. 3.6); it becomes a fragment of its own, so volume is
//! conserved exactly. A piece's restriction to a tet face
//! depends only on that face, so face portions of neighbouring tets cancel
//! and each fragment's surface is its crack triangles plus its share of the
//! body's boundary faces.
//!
//! Gaps (Glondu Fig. 3.6) become one small fragment per tet, closed by the
//! central triangles of its faces that hold three fragments. Merging the
//! gaps of neighbouring tets would make one fragment, but two gaps can also
//! touch along a mere segment (a face with two fragments), and a merged gap
//! would then pinch into a non-manifold surface.

use super::worker_local::WorkerLocal;
use super::FractureState;
use crate::mesh::{MassIntegrals, TetMesh, NO_NEIGHBOUR, TET_EDGES, TET_FACES};
use nalgebra::{Matrix3, Point3};
use rayon::prelude::*;

/// One fragment: its surface, tets and mass properties.
#[derive(Debug, Clone)]
pub struct Fragment {
    /// The fragment identifier of its nodes; gap fragments (which own no
    /// node) are numbered after the node fragments.
    pub id: u32,
    /// A gap fragment (Glondu Fig. 3.6).
    pub is_gap: bool,
    /// Volume (m³).
    pub volume_m3: f64,
    /// Mass (kg).
    pub mass_kg: f64,
    /// Centre of mass, in the body's frame (m).
    pub centroid_m: Point3<f64>,
    /// About the centroid, in body axes (kg·m²).
    pub inertia_kg_m2: Matrix3<f64>,
    /// Tets holding part of the fragment, ascending.
    pub tets: Vec<u32>,
    /// Closed, outward-oriented surface.
    pub points: Vec<Point3<f64>>,
    /// Triangles of `points`, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
    /// The triangles (indices into `triangles`) whose corners are all cut
    /// points: the crack surfaces (and, rarely, the central triangle of a
    /// boundary face split among three fragments).
    pub crack_triangles: Vec<u32>,
}

/// A surface vertex: a mesh node or the cut point of an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vertex {
    Node(u32),
    Cut(u32),
}

#[derive(Default)]
struct Builder {
    integrals: MassIntegrals,
    tets: Vec<u32>,
    triangles: Vec<[Vertex; 3]>,
}

/// Everything needed to split one tet: its nodes, its edges and the cut
/// points of the edges between its fragments, each computed once (a split
/// tet reads each of them for two to four pieces and for its boundary
/// faces).
struct TetSplit<'a> {
    mesh: &'a TetMesh,
    nodes: [u32; 4],
    /// Global edge index of each local edge, in [`TET_EDGES`] order.
    edges: [u32; 6],
    /// Cut point of each local edge whose nodes lie in different fragments.
    cut_points: [Point3<f64>; 6],
}

/// Local edge (index into [`TET_EDGES`]) between local nodes i and j.
const LOCAL_EDGE: [[usize; 4]; 4] = [
    [usize::MAX, 0, 1, 2],
    [0, usize::MAX, 3, 4],
    [1, 3, usize::MAX, 5],
    [2, 4, 5, usize::MAX],
];

impl<'a> TetSplit<'a> {
    /// Tet `tet`, whose nodes lie in the fragments `ids`.
    fn new(mesh: &'a TetMesh, state: &FractureState, tet: usize, ids: [u32; 4]) -> Self {
        let edges = mesh.topology().tet_edges[tet];
        let mut cut_points = [Point3::origin(); 6];
        for (local, &[a, b]) in TET_EDGES.iter().enumerate() {
            if ids[a] != ids[b] {
                cut_points[local] = cut_point(mesh, state, edges[local] as usize);
            }
        }
        Self {
            mesh,
            nodes: mesh.tets()[tet],
            edges,
            cut_points,
        }
    }

    /// Local node i's position (read only for tets that are split: an
    /// intact tet's integrals come from the mesh's table).
    fn point(&self, i: usize) -> Point3<f64> {
        self.mesh.nodes()[self.nodes[i] as usize]
    }

    fn edge(&self, i: usize, j: usize) -> u32 {
        self.edges[LOCAL_EDGE[i][j]]
    }

    fn cut(&self, i: usize, j: usize) -> Vertex {
        Vertex::Cut(self.edge(i, j))
    }

    /// The cut point between local nodes i and j, in different fragments.
    fn cut_point(&self, i: usize, j: usize) -> Point3<f64> {
        self.cut_points[LOCAL_EDGE[i][j]]
    }

    /// Corner piece at local node i: the tet (pᵢ, P_i,f0, P_i,f1, P_i,f2),
    /// positively oriented for every i with the [`TET_FACES`] order, and its
    /// crack triangle facing away from i.
    fn corner(&self, i: usize) -> (MassIntegrals, [Vertex; 3]) {
        let [f0, f1, f2] = TET_FACES[i];
        let integrals = MassIntegrals::tet([
            self.point(i),
            self.cut_point(i, f0),
            self.cut_point(i, f1),
            self.cut_point(i, f2),
        ]);
        (
            integrals,
            [self.cut(i, f0), self.cut(i, f1), self.cut(i, f2)],
        )
    }

    /// Wedge piece of the nodes {i, j} against {k, l}: the crack quad and
    /// the integrals (a cone from pᵢ over the faces not containing i).
    fn wedge(&self, i: usize, j: usize) -> (MassIntegrals, [[Vertex; 3]; 2]) {
        let mut others = (0..4).filter(|&n| n != i && n != j);
        let (mut k, mut l) = (others.next().unwrap(), others.next().unwrap());
        if !is_even([i, j, k, l]) {
            std::mem::swap(&mut k, &mut l);
        }
        // With (i, j, k, l) positively oriented, (P_ik, P_il, P_jl, P_jk)
        // faces away from {i, j}. Both sides of the quad split it along the
        // diagonal through the cut of lowest edge index, so they agree.
        let quad = [(i, k), (i, l), (j, l), (j, k)];
        let lowest = (0..4)
            .min_by_key(|&q| self.edge(quad[q].0, quad[q].1))
            .unwrap();
        let v = |q: usize| self.cut(quad[(lowest + q) % 4].0, quad[(lowest + q) % 4].1);
        let p = |q: usize| self.cut_point(quad[(lowest + q) % 4].0, quad[(lowest + q) % 4].1);
        let triangles = [[v(0), v(1), v(2)], [v(0), v(2), v(3)]];
        let mut integrals = MassIntegrals::tet([self.point(i), p(0), p(1), p(2)]);
        integrals.add(&MassIntegrals::tet([self.point(i), p(0), p(2), p(3)]));
        // The face opposite i holds j's corner of that face.
        let face = rotate_to(TET_FACES[i], j);
        integrals.add(&MassIntegrals::tet([
            self.point(i),
            self.point(j),
            self.cut_point(j, face[1]),
            self.cut_point(j, face[2]),
        ]));
        (integrals, triangles)
    }
}

/// Whether the permutation `p` of (0, 1, 2, 3) is even.
fn is_even(p: [usize; 4]) -> bool {
    let mut inversions = 0;
    for a in 0..4 {
        for b in a + 1..4 {
            if p[a] > p[b] {
                inversions += 1;
            }
        }
    }
    inversions % 2 == 0
}

/// The face's nodes rotated (cyclic order kept) so that `first` leads.
fn rotate_to(face: [usize; 3], first: usize) -> [usize; 3] {
    let at = face.iter().position(|&n| n == first).expect("node on face");
    [face[at], face[(at + 1) % 3], face[(at + 2) % 3]]
}

fn cut_point(mesh: &TetMesh, state: &FractureState, edge: usize) -> Point3<f64> {
    let [a, b] = mesh.topology().edges[edge];
    let t = state
        .cut_position(edge)
        .expect("an edge between two fragments is cut (flood fill)");
    let (pa, pb) = (mesh.nodes()[a as usize], mesh.nodes()[b as usize]);
    pa + (pb - pa) * t
}

fn reversed(t: [Vertex; 3]) -> [Vertex; 3] {
    [t[0], t[2], t[1]]
}

/// How many different values `ids` holds.
pub(super) fn distinct<const N: usize>(mut ids: [u32; N]) -> usize {
    ids.sort_unstable();
    1 + ids.windows(2).filter(|w| w[0] != w[1]).count()
}

/// Tets per chunk of the gathering pass. Chunks are fixed, so each
/// fragment's integrals are summed in the same order whatever the number of
/// threads; a body of one chunk sums them in tet order.
const GATHER_CHUNK: usize = 8192;

/// Splits the body into fragments; `density_kg_m3` gives mass and inertia.
/// Chunks of tets gather each fragment's integrals, tets and surface
/// triangles in parallel, merged in tet order; the fragments' surfaces are
/// then indexed in parallel.
pub fn fragments(mesh: &TetMesh, state: &FractureState, density_kg_m3: f64) -> Vec<Fragment> {
    let labels = Labels {
        node_ids: state.node_fragments(),
        bound: state.fragment_id_bound(),
    };
    labelled_fragments(mesh, state, labels, density_kg_m3)
}

/// The fragment identifier of each node: fragments are `0..bound`, gaps
/// are numbered from `bound`.
#[derive(Clone, Copy)]
pub(super) struct Labels<'a> {
    pub(super) node_ids: &'a [u32],
    pub(super) bound: u32,
}

/// [`fragments`] with the nodes labelled by `labels` rather than by the
/// state's fragments: nodes given one label form one piece per tet
/// whatever the cracks between them (a fragment body's view, where every
/// node outside it is one "elsewhere"). Cut points still come from the
/// state, wherever two labels meet.
pub(super) fn labelled_fragments(
    mesh: &TetMesh,
    state: &FractureState,
    labels: Labels<'_>,
    density_kg_m3: f64,
) -> Vec<Fragment> {
    let chunks: Vec<Gathered> = (0..mesh.tet_count().div_ceil(GATHER_CHUNK))
        .into_par_iter()
        .map(|c| {
            let tets = c * GATHER_CHUNK..((c + 1) * GATHER_CHUNK).min(mesh.tet_count());
            gather(mesh, state, labels, tets)
        })
        .collect();
    let mut chunks = chunks.into_iter();
    let mut all = chunks.next().unwrap_or_else(|| Gathered::new(labels.bound));
    for chunk in chunks {
        all.append(chunk);
    }
    // Node fragments are 0..bound; gap fragments, one per tet holding three
    // or four fragments, are numbered after them in tet order.
    let builders: Vec<Builder> = all.nodes.into_iter().chain(all.gaps).collect();
    // One vertex map per worker thread: a map is two words per node and
    // edge of the body (2 MB at 175k tets).
    let workers = WorkerLocal::new();
    builders
        .into_par_iter()
        .enumerate()
        .with_min_len(16)
        .filter_map(|(id, b)| {
            let id = id as u32;
            if b.integrals.volume <= 0.0 {
                return None;
            }
            let (points, triangles) = workers.with(
                || VertexSlots::new(mesh),
                |slots| slots.index(mesh, state, id, &b.triangles),
            );
            let crack_triangles = b
                .triangles
                .iter()
                .enumerate()
                .filter(|(_, t)| t.iter().all(|v| matches!(v, Vertex::Cut(_))))
                .map(|(i, _)| i as u32)
                .collect();
            let mut tets = b.tets;
            tets.sort_unstable();
            tets.dedup();
            Some(Fragment {
                id,
                is_gap: id >= labels.bound,
                volume_m3: b.integrals.volume,
                mass_kg: density_kg_m3 * b.integrals.volume,
                centroid_m: b.integrals.centroid(),
                inertia_kg_m2: b.integrals.inertia_about_centroid(density_kg_m3),
                tets,
                points,
                triangles,
                crack_triangles,
            })
        })
        .collect()
}

/// One worker's map from surface vertices (nodes, then edges' cut points)
/// to a fragment's point indices, valid where stamped with that fragment:
/// a fragment's surface is indexed in one pass without hashing or clearing.
struct VertexSlots {
    nodes: usize,
    /// Per vertex: 1 + the fragment whose slot it holds (0: none), and the
    /// slot; side by side, as every lookup reads both.
    slots: Vec<(u32, u32)>,
}

impl VertexSlots {
    fn new(mesh: &TetMesh) -> Self {
        let vertices = mesh.node_count() + mesh.topology().edges.len();
        Self {
            nodes: mesh.node_count(),
            slots: vec![(0, 0); vertices],
        }
    }

    /// Fragment `id`'s points (in order of first use) and its triangles
    /// as indices into them.
    fn index(
        &mut self,
        mesh: &TetMesh,
        state: &FractureState,
        id: u32,
        triangles: &[[Vertex; 3]],
    ) -> (Vec<Point3<f64>>, Vec<[u32; 3]>) {
        let mut points = Vec::new();
        let triangles = triangles
            .iter()
            .map(|tri| {
                tri.map(|v| {
                    let key = match v {
                        Vertex::Node(n) => n as usize,
                        Vertex::Cut(e) => self.nodes + e as usize,
                    };
                    let (stamp, slot) = &mut self.slots[key];
                    if *stamp != id + 1 {
                        *stamp = id + 1;
                        *slot = points.len() as u32;
                        points.push(match v {
                            Vertex::Node(n) => mesh.nodes()[n as usize],
                            Vertex::Cut(e) => cut_point(mesh, state, e as usize),
                        });
                    }
                    *slot
                })
            })
            .collect();
        (points, triangles)
    }
}

/// Each fragment's integrals, tets and surface triangles from `tets`: node
/// fragments by identifier, then the gaps in tet order.
struct Gathered {
    nodes: Vec<Builder>,
    gaps: Vec<Builder>,
}

impl Gathered {
    fn new(fragment_id_bound: u32) -> Self {
        Self {
            nodes: (0..fragment_id_bound).map(|_| Builder::default()).collect(),
            gaps: Vec::new(),
        }
    }

    /// Appends what the tets after this one's gathered.
    fn append(&mut self, later: Gathered) {
        for (mine, theirs) in self.nodes.iter_mut().zip(later.nodes) {
            mine.integrals.add(&theirs.integrals);
            mine.tets.extend(theirs.tets);
            mine.triangles.extend(theirs.triangles);
        }
        self.gaps.extend(later.gaps);
    }
}

fn gather(
    mesh: &TetMesh,
    state: &FractureState,
    labels: Labels<'_>,
    tets: std::ops::Range<usize>,
) -> Gathered {
    let topo = mesh.topology();
    let node_ids = labels.node_ids;
    let mut gathered = Gathered::new(labels.bound);
    let ids_of = |t: usize| mesh.tets()[t].map(|n| node_ids[n as usize]);
    for t in tets {
        let ids = ids_of(t);
        let nodes = mesh.tets()[t];
        let whole = &mesh.tet_integrals()[t];
        // Most tets lie in one fragment: they skip the sort of `distinct`
        // and need no cut points.
        let count = if ids.iter().all(|&r| r == ids[0]) {
            1
        } else {
            distinct(ids)
        };
        let split = (count > 1).then(|| TetSplit::new(mesh, state, t, ids));
        if let Some(split) = &split {
            let mut pieces = MassIntegrals::default();
            // At most four pieces of at most two crack triangles each.
            let mut crack_triangles = [[Vertex::Node(0); 3]; 8];
            let mut crack_count = 0;
            // A 1|3 tet's corner serves both its pieces.
            let mut corners: [Option<(MassIntegrals, [Vertex; 3])>; 4] = [None; 4];
            let mut corner = |i: usize| *corners[i].get_or_insert_with(|| split.corner(i));
            for i in 0..4 {
                let r = ids[i];
                if ids[..i].contains(&r) {
                    continue;
                }
                let mut members = [0; 4];
                let mut member_count = 0;
                for n in (0..4).filter(|&n| ids[n] == r) {
                    members[member_count] = n;
                    member_count += 1;
                }
                // A corner piece has one crack triangle (the array's first),
                // a wedge two.
                let (integrals, triangles, triangle_count) = match member_count {
                    1 => {
                        let (m, tri) = corner(members[0]);
                        (m, [tri; 2], 1)
                    }
                    3 => {
                        let other = (0..4).find(|&n| ids[n] != r).unwrap();
                        let (lone, tri) = corner(other);
                        let mut m = *whole;
                        m.sub(&lone);
                        (m, [reversed(tri); 2], 1)
                    }
                    _ => {
                        let (m, tris) = split.wedge(members[0], members[1]);
                        (m, tris, 2)
                    }
                };
                pieces.add(&integrals);
                let b = &mut gathered.nodes[r as usize];
                b.integrals.add(&integrals);
                b.tets.push(t as u32);
                // One or two triangles: element by element, as a slice copy
                // of this size is a call to `memcpy`.
                for &triangle in &triangles[..triangle_count] {
                    crack_triangles[crack_count] = triangle;
                    crack_count += 1;
                    b.triangles.push(triangle);
                }
            }
            if count >= 3 {
                let mut gap = *whole;
                gap.sub(&pieces);
                gathered.gaps.push(Builder::default());
                let b = gathered.gaps.last_mut().expect("just pushed");
                b.integrals.add(&gap);
                b.tets.push(t as u32);
                b.triangles.extend(
                    crack_triangles[..crack_count]
                        .iter()
                        .map(|&tri| reversed(tri)),
                );
                // Its share of every face whose three nodes are in three
                // fragments: the central triangle of the cut points.
                for face in TET_FACES {
                    if distinct(face.map(|l| ids[l])) == 3 {
                        b.triangles.push([
                            split.cut(face[0], face[1]),
                            split.cut(face[1], face[2]),
                            split.cut(face[2], face[0]),
                        ]);
                    }
                }
            }
        } else {
            let b = &mut gathered.nodes[ids[0] as usize];
            b.integrals.add(whole);
            b.tets.push(t as u32);
        }
        // The tet's share of the body's boundary: its faces without a
        // neighbour, in the order of `Topology::boundary_faces` (sorted node
        // keys), so that fragments come out the same however they are built.
        let mut boundary = [(0, [0u32; 3]); 4];
        let mut boundary_count = 0;
        for (opposite, &n) in topo.face_neighbours[t].iter().enumerate() {
            if n == NO_NEIGHBOUR {
                let mut key = TET_FACES[opposite].map(|l| nodes[l]);
                key.sort_unstable();
                boundary[boundary_count] = (opposite, key);
                boundary_count += 1;
            }
        }
        boundary[..boundary_count].sort_unstable_by_key(|&(_, key)| key);
        for &(opposite, _) in &boundary[..boundary_count] {
            let local = TET_FACES[opposite];
            let face_ids = local.map(|l| ids[l]);
            let vertex = |l: usize| Vertex::Node(nodes[l]);
            match distinct(face_ids) {
                1 => gathered.nodes[face_ids[0] as usize]
                    .triangles
                    .push(local.map(vertex)),
                _ => {
                    let split = split
                        .as_ref()
                        .expect("a face in two fragments is in a split tet");
                    for k in 0..3 {
                        let [x, y, z] = rotate_to(local, local[k]);
                        let (rx, ry, rz) = (ids[x], ids[y], ids[z]);
                        if ry != rx && rz != rx {
                            // x alone in its fragment on this face: its corner.
                            gathered.nodes[rx as usize].triangles.push([
                                vertex(x),
                                split.cut(x, y),
                                split.cut(x, z),
                            ]);
                        } else if ry == rx && rz != rx {
                            // x, y together, z apart: the trapezoid x, y, P_yz, P_xz.
                            let b = &mut gathered.nodes[rx as usize];
                            b.triangles.push([vertex(x), vertex(y), split.cut(y, z)]);
                            b.triangles
                                .push([vertex(x), split.cut(y, z), split.cut(x, z)]);
                        }
                    }
                    // With three fragments on the face its centre is the
                    // gap's, emitted with the gap above.
                }
            }
        }
    }
    gathered
}
